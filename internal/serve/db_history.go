package serve

import (
	"database/sql"
	"errors"
	"os"
	"time"

	"ralph/internal/fleet"
)

// What the store keeps of past tasks, and for how long: every task stays
// (with its iterations and the commands people gave it) until it has been
// finished for longer than HISTORY_DAYS.

// DefaultHistoryDays is how long a finished task is kept when
// HISTORY_DAYS is not set.
const DefaultHistoryDays = 30

// TaskFilter selects tasks of the history; a zero field selects all.
type TaskFilter struct {
	Session string
	State   fleet.State
	Origin  string
	// Since keeps the tasks changed at or after it.
	Since time.Time
}

func (f TaskFilter) match(t Task) bool {
	return (f.Session == "" || t.Session == f.Session) && (f.State == "" || t.State == f.State) &&
		(f.Origin == "" || t.Origin == f.Origin) && (f.Since.IsZero() || !t.UpdatedAt.Before(f.Since))
}

// TasksWhere lists the tasks f selects, newest first. Times are compared
// here, not in SQL: the stored text drops trailing zeros of its fraction,
// so it does not sort as time.
func (d *DB) TasksWhere(f TaskFilter) ([]Task, error) {
	q, args := `SELECT `+taskColumns+` FROM tasks`, []any{}
	var where []string
	for _, c := range []struct{ col, v string }{{"session", f.Session}, {"state", string(f.State)}, {"origin", f.Origin}} {
		if c.v != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	for i, w := range where {
		if i == 0 {
			q += " WHERE " + w
		} else {
			q += " AND " + w
		}
	}
	all, err := d.queryTasks(q+` ORDER BY seq DESC`, args...)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, t := range all {
		if f.match(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// StateCounts counts every task the store keeps by state: what the
// dashboard's counters say.
func (d *DB) StateCounts() (map[fleet.State]int, error) {
	rows, err := d.ro.Query(`SELECT state, COUNT(*) FROM tasks GROUP BY state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[fleet.State]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[fleet.State(s)] = n
	}
	return out, rows.Err()
}

// Pruned is what a prune removed.
type Pruned struct {
	Tasks []string // their ids
	// Files are the removed tasks' archived task files, for the caller
	// to delete once the rows are gone.
	Files []string
}

// Prune removes the tasks finished before cutoff, with their iterations,
// commands and pause requests, in one transaction. A session's latest
// task stays whatever its age: the session's view and the next task's
// start read it.
func (d *DB) Prune(cutoff time.Time) (Pruned, error) {
	var p Pruned
	old, err := d.queryTasks(`SELECT ` + taskColumns + ` FROM tasks WHERE state IN ('done', 'cancelled') AND seq NOT IN (SELECT MAX(seq) FROM tasks GROUP BY session)`)
	if err != nil {
		return p, err
	}
	tx, err := d.db.Begin()
	if err != nil {
		return p, err
	}
	defer tx.Rollback()
	for _, t := range old {
		if !t.State.Finished() || !t.UpdatedAt.Before(cutoff) {
			continue
		}
		if _, err := tx.Exec(`DELETE FROM iterations WHERE session = ? AND task_id = ?`, t.Session, t.ID); err != nil {
			return Pruned{}, err
		}
		for _, q := range []string{`DELETE FROM commands WHERE task_id = ?`, `DELETE FROM pauses WHERE task_id = ?`, `DELETE FROM pending_answers WHERE task_id = ?`,
			`DELETE FROM gate_items WHERE task_id = ?`, `DELETE FROM gate_grants WHERE task_id = ?`, `DELETE FROM tasks WHERE id = ?`} {
			if _, err := tx.Exec(q, t.ID); err != nil {
				return Pruned{}, err
			}
		}
		p.Tasks = append(p.Tasks, t.ID)
		if t.File != "" {
			p.Files = append(p.Files, t.File)
		}
	}
	if err := tx.Commit(); err != nil {
		return Pruned{}, err
	}
	return p, nil
}

// historyPruneEvery is how often the daemon looks for tasks past
// HISTORY_DAYS (and once when it starts).
const historyPruneEvery = time.Hour

// prune removes the tasks finished more than days ago and their archived
// files; days <= 0 keeps every task.
func (d *Daemon) prune(days int) {
	if days <= 0 {
		return
	}
	p, err := d.db.Prune(d.opts.Now().Add(-time.Duration(days) * 24 * time.Hour))
	if err != nil {
		d.logf("history: prune: %v", dbErr(err))
		return
	}
	for _, f := range p.Files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			d.logf("history: %v", err)
		}
	}
	if len(p.Tasks) > 0 {
		d.logf("history: removed %d task(s) finished more than %d days ago", len(p.Tasks), days)
	}
}

// pruneLoop prunes at start and then every interval until ctx ends.
func (d *Daemon) pruneLoop(done <-chan struct{}, every time.Duration) {
	days := d.opts.HistoryDays
	d.prune(days)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			d.prune(days)
		}
	}
}

// taskByID is the task id names (a fleet NotFound error when none).
func (d *Daemon) taskByID(id string) (Task, error) {
	t, err := d.db.Task(id)
	if errors.Is(err, sql.ErrNoRows) {
		return t, &fleet.Error{Code: fleet.NotFound, Msg: "no task " + id + " (it may have been removed after HISTORY_DAYS)"}
	}
	return t, err
}
