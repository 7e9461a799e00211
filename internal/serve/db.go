package serve

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // pure Go: the binary stays static

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
	cur    currentRows
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
	doc = redact.Encoded(doc)
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
		r = redact.Encoded(r)
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
