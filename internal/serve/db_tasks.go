package serve

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// Task is a task row.
type Task struct {
	ID      string
	Seq     int64
	Session string
	Title   string
	Origin  string
	State   fleet.State
	// MaxLoops is the task's iteration budget, counted from its first loop.
	MaxLoops int
	// FirstLoop is the session's loop count when the task was created: the
	// task's own count is the session's minus this.
	FirstLoop int
	// Loops is the task's iteration count as of its last change of state
	// (a finished task keeps it while the session works on others).
	Loops      int
	ExitReason string
	Message    string
	Questions  []string
	PRURL      string
	File       string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// ReplyTo is where the task's origin hears of it (a Telegram chat id
	// for origin telegram); "" for none. Never shown by the API.
	ReplyTo string
	// FirstCost is the session's total cost when the task was created, as
	// FirstLoop is its loop count.
	FirstCost float64
	// OriginURL is the page the task came from (a GitHub issue, a Slack
	// thread's permalink); PRDraft says the pull request is a draft.
	OriginURL string
	PRDraft   bool
}

// budget is the task's budget as the core counts it.
func (t Task) budget() loop.Budget { return loop.Budget{MaxLoops: t.MaxLoops, FirstLoop: t.FirstLoop} }

func (t Task) fleet() fleet.Task {
	return fleet.Task{ID: t.ID, Session: t.Session, State: t.State, Seq: t.Seq, Questions: t.Questions}
}

// ErrNoTask is returned for a session without tasks.
var ErrNoTask = errors.New("no task")

// CreateTask inserts a task, numbering it after every task ever made.
func (d *DB) CreateTask(ctx context.Context, t Task) (Task, error) {
	var id string
	err := d.writeTask(func() string { return id }, func() error {
		tx, err := d.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := tx.QueryRow(`SELECT COALESCE(MAX(seq), 0) + 1 FROM tasks`).Scan(&t.Seq); err != nil {
			return err
		}
		t.ID = fmt.Sprintf("t%d", t.Seq)
		id = t.ID
		t.UpdatedAt = t.CreatedAt
		t = maskTask(t)
		q, _ := json.Marshal(nonNil(t.Questions))
		if _, err := tx.Exec(`INSERT INTO tasks(id, seq, session, title, origin, state, max_loops, first_loop, exit_reason, message, questions, pr_url, file, created_at, updated_at, reply_to, first_cost, origin_url)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.Seq, t.Session, t.Title, t.Origin, string(t.State), t.MaxLoops, t.FirstLoop, t.ExitReason, t.Message,
			string(q), t.PRURL, t.File, t.CreatedAt.UTC().Format(time.RFC3339Nano), t.UpdatedAt.UTC().Format(time.RFC3339Nano), t.ReplyTo, t.FirstCost, t.OriginURL); err != nil {
			return err
		}
		return tx.Commit()
	})
	return t, err
}

// UpdateTask saves a task's changing fields.
func (d *DB) UpdateTask(t Task) error {
	return dbErr(d.writeTask(func() string { return t.ID }, func() error { return updateTask(d.st.updateTask, t) }))
}

// updateTask is UpdateTask with the statement of the caller's transaction
// (or none).
func updateTask(st *sql.Stmt, t Task) error {
	t = maskTask(t)
	q, _ := json.Marshal(nonNil(t.Questions))
	_, err := st.Exec(string(t.State), t.MaxLoops, t.Loops, t.ExitReason, t.Message, string(q), t.PRURL, t.PRDraft, t.File, t.UpdatedAt.UTC().Format(time.RFC3339Nano), t.ID)
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

const taskColumns = `id, seq, session, title, origin, state, max_loops, first_loop, loops, exit_reason, message, questions, pr_url, file, created_at, updated_at, reply_to, first_cost, origin_url, pr_draft`

func scanTask(row interface{ Scan(...any) error }) (Task, error) {
	var t Task
	var state, q, created, updated string
	if err := row.Scan(&t.ID, &t.Seq, &t.Session, &t.Title, &t.Origin, &state, &t.MaxLoops, &t.FirstLoop, &t.Loops, &t.ExitReason,
		&t.Message, &q, &t.PRURL, &t.File, &created, &updated, &t.ReplyTo, &t.FirstCost, &t.OriginURL, &t.PRDraft); err != nil {
		return t, err
	}
	t.State = fleet.State(state)
	if !t.State.Valid() {
		return t, fmt.Errorf("task %s: unknown state %q", t.ID, state)
	}
	if err := json.Unmarshal([]byte(q), &t.Questions); err != nil {
		return t, fmt.Errorf("task %s: questions: %w", t.ID, err)
	}
	if len(t.Questions) == 0 {
		t.Questions = nil
	}
	t.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	t.UpdatedAt, _ = time.Parse(time.RFC3339Nano, updated)
	return t, nil
}

// Tasks lists every task in creation order.
func (d *DB) Tasks() ([]Task, error) {
	return d.queryTasks(`SELECT ` + taskColumns + ` FROM tasks ORDER BY seq`)
}

func (d *DB) queryTasks(q string, args ...any) ([]Task, error) {
	rows, err := d.ro.Query(q, args...)
	if err != nil {
		return nil, err
	}
	return scanTasks(rows)
}

func scanTasks(rows *sql.Rows) ([]Task, error) {
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Task returns a task by id.
func (d *DB) Task(id string) (Task, error) {
	return scanTask(d.st.task.QueryRow(id))
}

// Requeue puts the tasks a dead daemon left running back in the queue, in
// their order: they resume from their last saved iteration.
func (d *DB) Requeue() (int64, error) {
	d.cur.write.Lock()
	res, err := d.db.Exec(`UPDATE tasks SET state = ? WHERE state = ?`, string(fleet.Queued), string(fleet.Running))
	d.forgetRows()
	d.cur.write.Unlock()
	d.cache.changed()
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
