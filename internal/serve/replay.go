package serve

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"

	"ralph/internal/fleet"
)

// StoredRecord is one iteration row of a task as the store keeps it
// (secrets masked), with its replay inputs: what `ralph replay` reads.
type StoredRecord struct {
	Loop   int             `json:"loop"`
	Record json.RawMessage `json:"record"`
}

// TaskReplay is a task's kept iteration rows, oldest first.
type TaskReplay struct {
	Task    string         `json:"task"`
	Session string         `json:"session"`
	Records []StoredRecord `json:"records"`
}

// Replay returns the kept iteration rows of the task with id.
func (d *DB) Replay(id string) (TaskReplay, error) {
	t, err := d.Task(id)
	if errors.Is(err, sql.ErrNoRows) {
		return TaskReplay{}, &fleet.Error{Code: fleet.NotFound, Msg: fmt.Sprintf("no task %q", id)}
	}
	if err != nil {
		return TaskReplay{}, dbErr(err)
	}
	r := TaskReplay{Task: t.ID, Session: t.Session, Records: []StoredRecord{}}
	err = d.records(t.Session, t.ID, historyKeep, func(n int, doc []byte) error {
		r.Records = append([]StoredRecord{{Loop: n, Record: json.RawMessage(doc)}}, r.Records...)
		return nil
	})
	return r, dbErr(err)
}

// Replay is a task's kept iteration rows (GET /api/replay/{id}).
func (d *Daemon) Replay(id string) (TaskReplay, error) { return d.db.Replay(id) }

// Replay asks the daemon for a task's kept iteration rows.
func (c *Client) Replay(ctx context.Context, id string) (TaskReplay, error) {
	var r TaskReplay
	err := c.do(ctx, "GET", "/api/replay/"+id, nil, &r)
	return r, err
}

// ReadReplay reads a task's iteration rows from the store of home when no
// daemon serves it; the store is opened read-only and left as it was.
func ReadReplay(home Home, id string) (TaskReplay, error) {
	db, err := openReadOnly(home.DB())
	if err != nil {
		return TaskReplay{}, err
	}
	defer db.ro.Close()
	defer db.st.close()
	return db.Replay(id)
}

// openReadOnly opens an existing store for reading only: no schema is
// created or migrated, and a missing file is an error rather than a new
// store.
func openReadOnly(path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("the daemon's store: %w", err)
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(5000)&_pragma=query_only(1)"
	ro, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ro.SetMaxOpenConns(1)
	if err := ro.Ping(); err != nil {
		ro.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// db is the same read-only pool: nothing here writes.
	d := &DB{db: ro, ro: ro}
	if err := d.st.prepare(nil, ro); err != nil {
		ro.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return d, nil
}
