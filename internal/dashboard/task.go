package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/serve"
	"ralph/internal/store"
	"ralph/internal/taskfile"
)

type taskData struct {
	page
	row
	// Iterations are newest first.
	Iterations  []iterRow
	Transitions []breaker.Transition
	Checklist   []checkItem
	ChecklistOf string // why there is no checklist, when there is none
	// LiveLoop is the session loop whose activity Lines shows.
	LiveLoop int
	Lines    []liveLine
	Can      can
	Error    string
}

type iterRow struct {
	loop.Metrics
	Why string
}

type checkItem struct {
	Done  bool
	Text  string
	Depth int
}

// can says which actions the task's state allows (the daemon checks
// again; this only hides buttons that would be refused).
type can struct {
	Pause, Resume, Stop, Cancel, Reset, Retry, Loop, Answer bool
	// Decide: the agent waits inside its call for decisions on Pending:
	// each tool call with its id, oldest first.
	Decide  bool
	Pending []serve.PendingItem
}

// pendingDecisions are the tool calls a task waits on: the view's pending
// list, or else its message ("waiting: approval a1 for Bash(npm publish)",
// from a daemon that lists none).
func pendingDecisions(v serve.TaskView) []serve.PendingItem {
	if v.State != fleet.Waiting {
		return nil
	}
	var out []serve.PendingItem
	for _, p := range v.Pending {
		if p.Kind == "approval" {
			out = append(out, p)
		}
	}
	if len(v.Pending) > 0 {
		return out
	}
	rest, ok := strings.CutPrefix(v.Message, "waiting: approval ")
	if !ok {
		return nil
	}
	if item, what, ok := strings.Cut(rest, " for "); ok && item != "" {
		out = append(out, serve.PendingItem{ID: item, Kind: "approval", What: what})
	}
	return out
}

func (d *Dashboard) taskPage(w http.ResponseWriter, r *http.Request) {
	d.showTask(w, r, http.StatusOK, "")
}

func (d *Dashboard) showTask(w http.ResponseWriter, r *http.Request, code int, problem string) {
	session := r.PathValue("session")
	data, err := d.taskData(session)
	if err != nil {
		var fe *fleet.Error
		if errors.As(err, &fe) && fe.Code == fleet.NotFound {
			d.refuse(w, r, http.StatusNotFound, fe.Msg)
			return
		}
		d.refuse(w, r, http.StatusInternalServerError, "The task could not be read: "+store.Redact(err.Error()))
		return
	}
	data.Error = problem
	q := url.Values{"view": {"task"}, "session": {session}}
	data.page = d.pageFor(r, data.Title+" — "+session, "", "/events?"+q.Encode())
	d.render(w, code, "task.html", data)
}

func (d *Dashboard) taskData(session string) (taskData, error) {
	v, err := d.src.Status(session)
	if err != nil {
		return taskData{}, err
	}
	data := taskData{row: d.rowOf(v)}
	recs, err := d.src.Records(session, v.ID)
	if err != nil {
		return taskData{}, err
	}
	for i := len(recs.Iterations) - 1; i >= 0; i-- {
		m := recs.Iterations[i]
		data.Iterations = append(data.Iterations, iterRow{Metrics: m, Why: serve.Why(m)})
	}
	data.Transitions = recs.Transitions
	data.Checklist, data.ChecklistOf = checklist(v.TaskFile, len(recs.Iterations))
	data.LiveLoop, data.Lines = d.feed.liveOf(session)
	s := v.State
	data.Can = can{
		Pause:  s == fleet.Running && !data.Paused && !data.Pausing,
		Resume: s == fleet.Running && (data.Paused || data.Pausing),
		Stop:   s == fleet.Running || s == fleet.Queued,
		Cancel: !s.Finished(),
		// Only an open (or half-open) breaker has anything to reset.
		Reset:  !s.Finished() && v.CircuitBreaker.State != "" && v.CircuitBreaker.State != string(breaker.Closed),
		Retry:  s == fleet.Halted && len(v.Questions) == 0,
		Loop:   (s == fleet.Waiting || s == fleet.Halted) && len(v.Questions) == 0,
		Answer: !s.Finished() && len(v.Questions) > 0,
	}
	data.Can.Pending = pendingDecisions(v)
	data.Can.Decide = len(data.Can.Pending) > 0
	return data, nil
}

// checklist reads the task file's checklist (a finished task's archived
// file too); ran is how many iterations the task ran, which says why a
// checklist is empty.
func checklist(path string, ran int) ([]checkItem, string) {
	if path == "" {
		return nil, "The task has no task file."
	}
	data, err := store.ReadIn("", path, store.MaxPlanSize)
	if err != nil {
		return nil, "The task file could not be read."
	}
	f, err := taskfile.Parse(path, data)
	if err != nil {
		return nil, store.Redact(err.Error())
	}
	var out []checkItem
	for _, t := range f.Checklist.Tasks {
		out = append(out, checkItem{Done: t.Done, Text: store.Redact(t.Text), Depth: min(t.Depth, 4)})
	}
	switch {
	case len(out) == 0 && ran == 0:
		return nil, "No items yet: the agent writes them on its first iteration."
	case len(out) == 0:
		return nil, "The agent has written no checklist in the task file."
	}
	return out, ""
}

// verbs are the actions a task page posts, as the fleet's commands; the
// new-task form posts start and start_loop (see start).
var verbs = []fleet.Verb{fleet.Pause, fleet.Resume, fleet.Stop, fleet.Cancel, fleet.Reset, fleet.Retry, fleet.Loop, fleet.Answer, fleet.Approve, fleet.Deny}

// FleetVerbs lists the fleet commands the dashboard gives, with where.
func FleetVerbs() map[fleet.Verb]string {
	out := map[fleet.Verb]string{
		fleet.Start:     "the overview's new-task form, with no loop",
		fleet.StartLoop: "the overview's new-task form",
	}
	for _, v := range verbs {
		out[v] = "the task page's " + string(v) + " button"
	}
	return out
}

// action is POST /task/{session}/{verb}: it asks the daemon, then shows
// the task again (a redirect, so a reload does not repeat the action).
func (d *Dashboard) action(w http.ResponseWriter, r *http.Request) {
	if !d.checkPost(w, r) {
		return
	}
	session, verb := r.PathValue("session"), fleet.Verb(r.PathValue("verb"))
	if !slices.Contains(verbs, verb) {
		d.refuse(w, r, http.StatusNotFound, "There is no action "+string(verb)+".")
		return
	}
	c := fleet.Command{Verb: verb, Session: session, Who: fleet.Who{Surface: fleet.SurfaceWeb}}
	switch verb {
	case fleet.Cancel:
		// Giving a task up kills its agent and cannot be undone: the
		// button asks first, on a page of its own (no script needed).
		if r.PostForm.Get("confirm") != "yes" {
			d.confirmCancel(w, r, session)
			return
		}
	case fleet.Loop:
		n, perr := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("max")))
		if perr != nil || n < 1 || n > 10000 {
			d.showTask(w, r, http.StatusBadRequest, "Loop how many more times? A number from 1 to 10000.")
			return
		}
		c.MaxLoops = n
	case fleet.Answer:
		c.Text = strings.TrimSpace(r.PostForm.Get("text"))
		if c.Text == "" {
			d.showTask(w, r, http.StatusBadRequest, "The answer is empty.")
			return
		}
	case fleet.Approve, fleet.Deny:
		c.Item, c.Text = strings.TrimSpace(r.PostForm.Get("item")), strings.TrimSpace(r.PostForm.Get("text"))
		c.ForTask = verb == fleet.Approve && r.PostForm.Get("scope") == "task"
	}
	if _, err := d.src.Do(r.Context(), c); err != nil {
		d.showTask(w, r, refusalCode(err), store.Redact(err.Error()))
		return
	}
	http.Redirect(w, r, "/task/"+url.PathEscape(session), http.StatusSeeOther)
}

type confirmData struct {
	page
	Task serve.TaskView
}

// confirmCancel asks whether the session's task is to be given up.
func (d *Dashboard) confirmCancel(w http.ResponseWriter, r *http.Request, session string) {
	v, err := d.src.Status(session)
	if err != nil {
		d.historyRefusal(w, r, err, "The task")
		return
	}
	data := confirmData{Task: v}
	data.page = d.pageFor(r, "Cancel "+v.Title+"?", "", "")
	d.render(w, http.StatusOK, "confirm.html", data)
}
