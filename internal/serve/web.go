package serve

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/store"
)

// What the web dashboard (internal/dashboard) reads and asks of the
// daemon besides the task views: it lives in its own package and reaches
// the daemon only through these methods.

// SetWeb mounts h at / beside the API (the dashboard); h does its own
// authentication. Call it before Serve.
func (d *Daemon) SetWeb(h http.Handler) { d.web = h }

// Subscribe streams the daemon's events, masked, as the API's event
// stream does, until the returned func is called. A subscriber that falls
// subQueue events behind is dropped: its channel closes.
func (d *Daemon) Subscribe() (<-chan Event, func()) { return d.hub.subscribe() }

// TaskUsage is what a task's kept iterations add up to.
type TaskUsage struct {
	Iterations   int
	CostUSD      float64
	InputTokens  int64
	OutputTokens int64
	// Summary is the agent's last non-empty summary, masked.
	Summary string
	// Loop is the session's loop number of the last one: a reader that
	// adds later iterations from the event stream skips those up to it.
	Loop int
}

// Usage sums up every task's kept iterations (the store keeps a session's
// last 50), by task id, in one query: the overview shows each task's
// cost and last summary without decoding every record.
func (d *Daemon) Usage() (map[string]TaskUsage, error) {
	rows, err := d.db.ro.Query(`SELECT task_id, loop, json_extract(record, '$.cost_usd'), json_extract(record, '$.input_tokens'),
		json_extract(record, '$.output_tokens'), json_extract(record, '$.summary') FROM iterations ORDER BY session, rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]TaskUsage{}
	for rows.Next() {
		var id string
		var n int
		var cost sql.NullFloat64
		var in, outTok sql.NullInt64
		var summary sql.NullString
		if err := rows.Scan(&id, &n, &cost, &in, &outTok, &summary); err != nil {
			return nil, err
		}
		u := out[id]
		u.Iterations++
		u.Loop = max(u.Loop, n)
		u.CostUSD += cost.Float64
		u.InputTokens += in.Int64
		u.OutputTokens += outTok.Int64
		if strings.TrimSpace(summary.String) != "" {
			u.Summary = summary.String
		}
		out[id] = u
	}
	for id, u := range out {
		u.Summary = store.Redact(u.Summary)
		out[id] = u
	}
	return out, rows.Err()
}

// liveIterations is how many of a task's iterations its live page shows
// (and renders again on every change); its history page shows them all.
const liveIterations = 50

// TaskRecords is what the task page shows beside the task's view.
type TaskRecords struct {
	// Iterations are the task's last liveIterations, oldest first, their Loop
	// counted from the task's start like TaskView.LoopCount; summaries
	// and status blocks masked.
	Iterations []loop.Metrics
	// Transitions are the session breaker's changes during the task,
	// oldest first, loops counted the same way.
	Transitions []breaker.Transition
}

// Records returns the session's current task's records; taskID, when
// set, must be that task (a page asks about the task it shows).
func (d *Daemon) Records(session, taskID string) (TaskRecords, error) {
	t, err := d.current(fleet.Status, session)
	if err != nil {
		return TaskRecords{}, err
	}
	if taskID != "" && t.ID != taskID {
		return TaskRecords{}, &fleet.Error{Code: fleet.NotFound, Msg: fmt.Sprintf("task %s is no longer session %s's task", taskID, session)}
	}
	h, err := d.db.History(session, t.ID, liveIterations)
	if err != nil {
		return TaskRecords{}, err
	}
	var r TaskRecords
	for _, m := range h {
		m.Loop = t.budget().Used(m.Loop)
		r.Iterations = append(r.Iterations, masked(m))
	}
	st, found, err := d.db.LoadState(session)
	if err != nil || !found {
		return r, err
	}
	for _, tr := range st.Breaker.History {
		if !tr.At.Before(t.CreatedAt) {
			tr.Loop = t.budget().Used(tr.Loop)
			tr.Message = store.Redact(tr.Message)
			r.Transitions = append(r.Transitions, tr)
		}
	}
	return r, nil
}

// SessionIteration is one kept iteration of a session.
type SessionIteration struct {
	Session string
	TaskID  string
	loop.Metrics
}

// Iterations returns every kept iteration (a session's last 50), by
// session then loop: the data of the dashboard's statistics.
func (d *Daemon) Iterations() ([]SessionIteration, error) {
	rows, err := d.db.ro.Query(`SELECT session, task_id, record FROM iterations ORDER BY session, rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SessionIteration
	for rows.Next() {
		var it SessionIteration
		var doc string
		if err := rows.Scan(&it.Session, &it.TaskID, &doc); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(doc), &it.Metrics); err != nil {
			return nil, fmt.Errorf("session %s: iteration record: %w", it.Session, err)
		}
		it.Metrics = masked(it.Metrics)
		out = append(out, it)
	}
	return out, rows.Err()
}

// masked is m with the agent's words masked.
func masked(m loop.Metrics) loop.Metrics {
	m.Summary = store.Redact(m.Summary)
	if len(m.StatusBlock) > 0 {
		sb := make(map[string]string, len(m.StatusBlock))
		for k, v := range m.StatusBlock {
			sb[k] = store.Redact(v)
		}
		m.StatusBlock = sb
	}
	return m
}

// PauseRequested reports whether the session's loop is asked to hold (it
// may still be finishing its iteration).
func (d *Daemon) PauseRequested(session string) bool {
	d.mu.Lock()
	w := d.workers[session]
	d.mu.Unlock()
	if w == nil {
		return false
	}
	r, _ := w.ctl.Read()
	return r.Pause
}

func (c *controller) pause(by string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.req.Pause, c.req.PauseBy = true, by
}

func (c *controller) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.req.Pause, c.req.PauseBy = false, ""
}
