package serve

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // pure Go: the binary stays static

	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/redact"
)

// DB is the daemon's store: sessions (with their loop state and agent
// session), tasks and the recent iterations, in one SQLite file in WAL mode.
// DB is the daemon's store. Writes go through one connection: SQLite has
// one writer anyway, and a single connection makes every write a
// serialised transaction without busy retries. Reads have their own pool:
// in WAL mode they see every committed write without waiting for the
// writer, so status requests stay fast while many loops save iterations.
type DB struct {
	db, ro *sql.DB
	st     stmts
	cache  viewCache
}

// readers is the size of the read pool.
const readers = 4

// historyKeep is how many iterations a task keeps in the store: its
// history's view (ralph task show, the dashboard) shows them all, and
// HISTORY_DAYS bounds how long a finished task keeps them.
const historyKeep = 500

const schema = `
CREATE TABLE IF NOT EXISTS sessions (
	name          TEXT PRIMARY KEY,
	dir           TEXT NOT NULL,
	state         TEXT NOT NULL DEFAULT '',
	agent_session TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS tasks (
	id          TEXT PRIMARY KEY,
	seq         INTEGER NOT NULL UNIQUE,
	session     TEXT NOT NULL,
	title       TEXT NOT NULL,
	origin      TEXT NOT NULL,
	state       TEXT NOT NULL,
	max_loops   INTEGER NOT NULL DEFAULT 0,
	first_loop  INTEGER NOT NULL DEFAULT 0,
	loops       INTEGER NOT NULL DEFAULT 0,
	exit_reason TEXT NOT NULL DEFAULT '',
	message     TEXT NOT NULL DEFAULT '',
	questions   TEXT NOT NULL DEFAULT '[]',
	pr_url      TEXT NOT NULL DEFAULT '',
	file        TEXT NOT NULL,
	created_at  TEXT NOT NULL,
	updated_at  TEXT NOT NULL,
	reply_to    TEXT NOT NULL DEFAULT '',
	first_cost  REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS tasks_session ON tasks(session, seq);
CREATE TABLE IF NOT EXISTS agents (
	session TEXT PRIMARY KEY,
	pgid    INTEGER NOT NULL,
	start   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS commands (
	task_id TEXT NOT NULL,
	at      TEXT NOT NULL,
	verb    TEXT NOT NULL,
	surface TEXT NOT NULL,
	user    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS commands_task ON commands(task_id, at);
CREATE TABLE IF NOT EXISTS pauses (
	task_id TEXT PRIMARY KEY,
	by      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pending_answers (
	task_id TEXT PRIMARY KEY,
	text    TEXT NOT NULL,
	by      TEXT NOT NULL,
	to_loop INTEGER NOT NULL,
	loops   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS iterations (
	session TEXT NOT NULL,
	loop    INTEGER NOT NULL,
	task_id TEXT NOT NULL,
	record  TEXT NOT NULL,
	PRIMARY KEY (session, task_id, loop)
);
`

// OpenDB opens (creating) the store at path.
func OpenDB(path string) (*DB, error) {
	// synchronous=NORMAL in WAL mode survives a crash of the process (the
	// daemon's kill -9); only a power loss may lose the last commits.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(ON)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := addColumns(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := rekeyIterations(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ro, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ro.SetMaxOpenConns(readers)
	ro.SetMaxIdleConns(readers)
	d := &DB{db: db, ro: ro}
	if err := d.st.prepare(db, ro); err != nil {
		ro.Close()
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return d, nil
}

// Close closes the store.
func (d *DB) Close() error { return errors.Join(d.st.close(), d.ro.Close(), d.db.Close()) }

// Session is a registered workspace.
type Session struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
}

// PutSession registers a session or moves it to dir.
func (d *DB) PutSession(s Session) error {
	_, err := d.db.Exec(`INSERT INTO sessions(name, dir) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET dir = excluded.dir`, s.Name, s.Dir)
	d.cache.changed()
	return err
}

// Sessions lists the registered sessions by name.
func (d *DB) Sessions() ([]Session, error) {
	rows, err := d.ro.Query(`SELECT name, dir FROM sessions ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var s Session
		if err := rows.Scan(&s.Name, &s.Dir); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// LoadState returns a session's loop state (found false before its first
// loop). A document from before the state held the agent session takes
// the one the agent_session column kept, as if it began now (that column
// knew no age), and is then a current document: the column is never read
// again.
func (d *DB) LoadState(session string) (loop.State, bool, error) {
	var doc, agentSession string
	err := d.st.loadState.QueryRow(session).Scan(&doc, &agentSession)
	if err != nil {
		return loop.State{}, false, fmt.Errorf("session %s: %w", session, dbErr(err))
	}
	if doc == "" {
		return loop.State{}, false, nil
	}
	var st loop.State
	if err := json.Unmarshal([]byte(doc), &st); err != nil {
		return loop.State{}, false, fmt.Errorf("session %s: state document: %w", session, err)
	}
	if err := st.Validate(); err != nil {
		return loop.State{}, false, fmt.Errorf("session %s: state document: %w", session, err)
	}
	if st.Version < loop.StateVersion {
		st = loop.AdoptSession(st, agentSession, time.Now().UTC().Round(0))
		st.Version = loop.StateVersion
	}
	return st, true, nil
}

// SaveState saves a session's loop state and, when rec is set, the record
// of the iteration that produced it, its call in the spend ledger and the
// end of its agent's process group (reaped by then: nothing for a later
// daemon to end), in one transaction: a kill never keeps one without the
// others, and a record saved twice is the same row. State and record are
// stored with their secrets masked, as the state files of `ralph run`.
func (d *DB) SaveState(session, taskID string, st loop.State, rec *loop.Metrics) error {
	return dbErr(d.saveState(session, taskID, st, rec))
}

func (d *DB) saveState(session, taskID string, st loop.State, rec *loop.Metrics) error {
	doc, err := json.Marshal(st)
	if err != nil {
		return err
	}
	doc = redact.JSON(doc)
	tx, err := d.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.Stmt(d.st.setState).Exec(string(doc), session)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("session %s is not registered", session)
	}
	if rec != nil {
		r, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		r = redact.JSON(r)
		if _, err := tx.Stmt(d.st.putRecord).Exec(session, rec.Loop, taskID, string(r)); err != nil {
			return err
		}
		if _, err := tx.Stmt(d.st.trimRecords).Exec(session, taskID, rec.Loop-historyKeep); err != nil {
			return err
		}
		if err := d.recordSpend(tx, session, taskID, rec); err != nil {
			return err
		}
		if err := recordWindows(tx, session, rec); err != nil {
			return err
		}
		if _, err := tx.Stmt(d.st.clearGroup).Exec(session); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	d.cache.saved(session, taskID, st, rec)
	return nil
}

// progress is a session's loop number and breaker, from memory once read.
func (d *DB) progress(session string) (progress, error) {
	p, ok, gen := d.cache.getProgress(session)
	if ok {
		return p, nil
	}
	st, found, err := d.LoadState(session)
	if err != nil {
		return progress{}, err
	}
	p = progressOf(st, found)
	d.cache.setProgress(session, p, gen)
	return p, nil
}

// recentHistory is History(session, taskID, historyShown), from memory
// once read.
func (d *DB) recentHistory(session, taskID string) ([]loop.Metrics, error) {
	h, ok, gen := d.cache.getHistory(session, taskID)
	if ok {
		return h, nil
	}
	h, err := d.History(session, taskID, historyShown)
	if err != nil {
		return nil, err
	}
	d.cache.setHistory(session, taskID, h, gen)
	return h, nil
}

// History returns the last n iterations of a task on session, oldest
// first, without their replay inputs (views show them). The session lets
// the query walk the primary key backwards instead of scanning every
// session's iterations.
func (d *DB) History(session, taskID string, n int) ([]loop.Metrics, error) {
	var out []loop.Metrics
	err := d.records(session, taskID, n, func(_ int, doc []byte) error {
		var m loop.Metrics
		if err := json.Unmarshal(doc, &m); err != nil {
			return err
		}
		out = append([]loop.Metrics{m.Lean()}, out...)
		return nil
	})
	return out, err
}

// records hands fn the last n iteration rows of a task, newest first, as
// stored (loop number, masked JSON).
func (d *DB) records(session, taskID string, n int, fn func(loop int, doc []byte) error) error {
	rows, err := d.st.records.Query(session, taskID, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			n   int
			doc string
		)
		if err := rows.Scan(&n, &doc); err != nil {
			return err
		}
		if err := fn(n, []byte(doc)); err != nil {
			return err
		}
	}
	return rows.Err()
}

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
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return t, err
	}
	defer tx.Rollback()
	if err := tx.QueryRow(`SELECT COALESCE(MAX(seq), 0) + 1 FROM tasks`).Scan(&t.Seq); err != nil {
		return t, err
	}
	t.ID = fmt.Sprintf("t%d", t.Seq)
	t.UpdatedAt = t.CreatedAt
	t = maskTask(t)
	q, _ := json.Marshal(nonNil(t.Questions))
	if _, err := tx.Exec(`INSERT INTO tasks(id, seq, session, title, origin, state, max_loops, first_loop, exit_reason, message, questions, pr_url, file, created_at, updated_at, reply_to, first_cost, origin_url)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Seq, t.Session, t.Title, t.Origin, string(t.State), t.MaxLoops, t.FirstLoop, t.ExitReason, t.Message,
		string(q), t.PRURL, t.File, t.CreatedAt.UTC().Format(time.RFC3339Nano), t.UpdatedAt.UTC().Format(time.RFC3339Nano), t.ReplyTo, t.FirstCost, t.OriginURL); err != nil {
		return t, err
	}
	err = tx.Commit()
	d.cache.changed()
	return t, err
}

// UpdateTask saves a task's changing fields.
func (d *DB) UpdateTask(t Task) error {
	err := updateTask(d.st.updateTask, t)
	d.cache.changed()
	return dbErr(err)
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

// CurrentTasks lists each session's latest task, in creation order.
func (d *DB) CurrentTasks() ([]Task, error) {
	rows, err := d.st.currentTasks.Query()
	if err != nil {
		return nil, err
	}
	return scanTasks(rows)
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

// CurrentTask returns a session's latest task (ErrNoTask: none yet).
func (d *DB) CurrentTask(session string) (Task, error) {
	t, err := scanTask(d.st.currentTask.QueryRow(session))
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNoTask
	}
	return t, err
}

// Requeue puts the tasks a dead daemon left running back in the queue, in
// their order: they resume from their last saved iteration.
func (d *DB) Requeue() (int64, error) {
	res, err := d.db.Exec(`UPDATE tasks SET state = ? WHERE state = ?`, string(fleet.Queued), string(fleet.Running))
	d.cache.changed()
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
