package dashboard

import (
	"net/http"
	"net/url"
	"slices"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// states is the order the overview counts states in: what needs a person
// or runs now first.
var states = []fleet.State{fleet.Running, fleet.Waiting, fleet.Queued, fleet.Halted, fleet.Done, fleet.Cancelled}

type overviewData struct {
	page
	Filter string
	// Current counts the sessions' current tasks, the rows without a
	// filter; Counts every task kept in each state, the rows with one.
	Current int
	Counts  []stateCount
	Asking  int // tasks waiting for an answer
	Rows    []row
	// Idle are the sessions that never had a task; Free the sessions a
	// new task may start on (idle, or their last task finished).
	Idle  []string
	Free  []string
	Error string
	// StartProblem is what was wrong with the new-task form.
	StartProblem string
	// Spend is today's spend against the daily budgets (nil: the source
	// does not tell).
	Spend *serve.BudgetReport
}

// budgeted is a Source that tells today's spend (the daemon does).
type budgeted interface {
	Budget() (serve.BudgetReport, error)
}

type stateCount struct {
	State  fleet.State
	N      int
	Active bool
}

// row is a task as the overview and the task page show it.
type row struct {
	serve.TaskView
	Usage serve.TaskUsage
	// Paused: the loop holds (or will after its iteration) until resumed.
	Paused, Pausing bool
}

func (d *Dashboard) rowOf(v serve.TaskView) row {
	r := row{TaskView: v, Usage: d.feed.usageOf(v.ID)}
	if v.State == fleet.Running {
		r.Paused = v.Activity == "paused"
		r.Pausing = !r.Paused && d.src.PauseRequested(v.Session)
	}
	return r
}

// overview is GET /: the login by ?token=, else the fleet's tasks.
func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request) {
	if tok := r.URL.Query().Get("token"); tok != "" {
		d.login(w, r, tok)
		return
	}
	if !d.who(r).ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ralph"`)
		d.refuse(w, r, http.StatusUnauthorized, "")
		return
	}
	filter := r.URL.Query().Get("state")
	if filter != "" && !fleet.State(filter).Valid() {
		d.refuse(w, r, http.StatusBadRequest, "There is no state "+filter+".")
		return
	}
	data := d.overviewData(filter)
	q := url.Values{"view": {"overview"}}
	if filter != "" {
		q.Set("state", filter)
	}
	data.page = d.pageFor(r, "Fleet", "overview", "/events?"+q.Encode())
	d.render(w, http.StatusOK, "overview.html", data)
}

func (d *Dashboard) overviewData(filter string) overviewData {
	data := overviewData{Filter: filter}
	views, err := d.src.List()
	if err != nil {
		data.Error = "The tasks could not be read: " + err.Error()
	}
	has := map[string]bool{}
	for _, v := range views {
		has[v.Session] = true
		if len(v.Questions) > 0 {
			data.Asking++
		}
		if filter == "" {
			data.Rows = append(data.Rows, d.rowOf(v))
		}
	}
	data.Current = len(views)
	// The counters count every task the daemon keeps, finished ones too:
	// four tasks done on one session are four done, not the one current.
	n, err := d.src.StateCounts()
	if err != nil && data.Error == "" {
		data.Error = "The tasks could not be counted: " + err.Error()
	}
	if filter != "" {
		all, err := d.src.History(serve.TaskFilter{State: fleet.State(filter)})
		if err != nil && data.Error == "" {
			data.Error = "The tasks could not be read: " + err.Error()
		}
		for _, v := range all {
			data.Rows = append(data.Rows, d.rowOf(v))
		}
	}
	if b, ok := d.src.(budgeted); ok {
		if r, err := b.Budget(); err == nil {
			data.Spend = &r
		}
	}
	for _, s := range states {
		data.Counts = append(data.Counts, stateCount{State: s, N: n[s], Active: string(s) == filter})
	}
	busy := map[string]bool{}
	for _, v := range views {
		busy[v.Session] = busy[v.Session] || !v.State.Finished()
	}
	if sessions, err := d.src.Sessions(); err == nil {
		for _, s := range sessions {
			if !has[s.Name] {
				data.Idle = append(data.Idle, s.Name)
			}
			if !busy[s.Name] {
				data.Free = append(data.Free, s.Name)
			}
		}
		slices.Sort(data.Idle)
		slices.Sort(data.Free)
	}
	return data
}
