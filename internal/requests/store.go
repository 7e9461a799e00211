package requests

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite"
)

// Request is one GitHub issue or Slack thread and what ralph made of it.
type Request struct {
	// Key names it for good: "github:owner/name#42", "slack:C1/1712.0001".
	Key    string
	Source string // "github" or "slack"
	// Repo is the target repository (owner/name), Number its issue (0 for
	// Slack); Channel and Thread the Slack conversation.
	Repo    string
	Number  int
	Channel string
	Thread  string
	Title   string
	Body    string
	Author  string
	// Session and Branch are the daemon session and the git branch.
	Session string
	Branch  string
	// StatusRef is the status comment (its id) or message (its ts) that is
	// edited in place.
	StatusRef string
	PRNumber  int
	PRURL     string
	// Handled is the last outcome acted upon (task, outcome, loop).
	Handled string
	// AskedAt is when the pending questions were posted (zero when none
	// are); Reminded the Handled key of the questions a reminder was sent
	// for, so that it goes out once per question.
	AskedAt   time.Time
	Reminded  string
	CreatedAt time.Time
	// PRState is where ralph is in following its pull request (follow.go):
	// "" before one opens, then review, round, merged or closed; Rounds
	// counts the follow-up rounds started.
	PRState string
	Rounds  int
}

// Entry is one message of a request's thread, from a person.
type Entry struct {
	ID     string // "issue", a comment id, a message ts
	Author string
	Body   string
	At     time.Time
	// Acted says the daemon has been told (started, answered, resumed).
	Acted bool
	// Kind is what on the pull request it is ("" for the request's own
	// thread; follow.go names the others), Ref what it is about (a
	// review comment's path and line, a check's name), Thread the review
	// comment that started its thread (replied to, resolved) and Round
	// the follow-up round that took it (0: none).
	Kind   string
	Ref    string
	Thread int64
	Round  int
}

// Store keeps requests in their own SQLite file beside the daemon's.
type Store struct{ db *sql.DB }

const schema = `
CREATE TABLE IF NOT EXISTS requests (
	key        TEXT PRIMARY KEY,
	source     TEXT NOT NULL,
	repo       TEXT NOT NULL,
	number     INTEGER NOT NULL DEFAULT 0,
	channel    TEXT NOT NULL DEFAULT '',
	thread     TEXT NOT NULL DEFAULT '',
	title      TEXT NOT NULL,
	body       TEXT NOT NULL,
	author     TEXT NOT NULL,
	session    TEXT NOT NULL UNIQUE,
	branch     TEXT NOT NULL,
	status_ref TEXT NOT NULL DEFAULT '',
	pr_number  INTEGER NOT NULL DEFAULT 0,
	pr_url     TEXT NOT NULL DEFAULT '',
	handled    TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	asked_at   TEXT NOT NULL DEFAULT '',
	reminded   TEXT NOT NULL DEFAULT '',
	pr_state   TEXT NOT NULL DEFAULT '',
	rounds     INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS entries (
	request TEXT NOT NULL,
	id      TEXT NOT NULL,
	seq     INTEGER NOT NULL,
	author  TEXT NOT NULL,
	body    TEXT NOT NULL,
	at      TEXT NOT NULL,
	acted   INTEGER NOT NULL DEFAULT 0,
	kind    TEXT NOT NULL DEFAULT '',
	ref     TEXT NOT NULL DEFAULT '',
	thread  INTEGER NOT NULL DEFAULT 0,
	round   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (request, id)
);
CREATE TABLE IF NOT EXISTS deliveries (
	id TEXT PRIMARY KEY,
	at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cursors (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
`

// OpenStore opens (creating) the store at path.
func OpenStore(path string) (*Store, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := migrate(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// migrate adds the columns a store made by an older ralph lacks.
func migrate(db *sql.DB) error {
	if err := addColumns(db, "requests", map[string]string{"asked_at": "TEXT NOT NULL DEFAULT ''", "reminded": "TEXT NOT NULL DEFAULT ''",
		"pr_state": "TEXT NOT NULL DEFAULT ''", "rounds": "INTEGER NOT NULL DEFAULT 0"}); err != nil {
		return err
	}
	return addColumns(db, "entries", map[string]string{"kind": "TEXT NOT NULL DEFAULT ''", "ref": "TEXT NOT NULL DEFAULT ''",
		"thread": "INTEGER NOT NULL DEFAULT 0", "round": "INTEGER NOT NULL DEFAULT 0"})
}

func addColumns(db *sql.DB, table string, cols map[string]string) error {
	have := map[string]bool{}
	rows, err := db.Query(`SELECT name FROM pragma_table_info('` + table + `')`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		have[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for col, typ := range cols {
		if !have[col] {
			if _, err := db.Exec(`ALTER TABLE ` + table + ` ADD COLUMN ` + col + ` ` + typ); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// ErrNoRequest: no request has that key or session.
var ErrNoRequest = errors.New("no such request")

const reqColumns = `key, source, repo, number, channel, thread, title, body, author, session, branch, status_ref, pr_number, pr_url, handled, created_at, asked_at, reminded, pr_state, rounds`

func scanRequest(row interface{ Scan(...any) error }) (Request, error) {
	var r Request
	var created, asked string
	err := row.Scan(&r.Key, &r.Source, &r.Repo, &r.Number, &r.Channel, &r.Thread, &r.Title, &r.Body, &r.Author,
		&r.Session, &r.Branch, &r.StatusRef, &r.PRNumber, &r.PRURL, &r.Handled, &created, &asked, &r.Reminded, &r.PRState, &r.Rounds)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNoRequest
	}
	r.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	if asked != "" {
		r.AskedAt, _ = time.Parse(time.RFC3339Nano, asked)
	}
	return r, err
}

// Get returns the request with key.
func (s *Store) Get(key string) (Request, error) {
	return scanRequest(s.db.QueryRow(`SELECT `+reqColumns+` FROM requests WHERE key = ?`, key))
}

// BySession returns the request a daemon session works on.
func (s *Store) BySession(session string) (Request, error) {
	return scanRequest(s.db.QueryRow(`SELECT `+reqColumns+` FROM requests WHERE session = ?`, session))
}

// All lists the requests, oldest first.
func (s *Store) All() ([]Request, error) {
	rows, err := s.db.Query(`SELECT ` + reqColumns + ` FROM requests ORDER BY created_at, key`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		r, err := scanRequest(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Create inserts r with its opening entry unless a request with its key
// exists; created says which. One issue or thread is one request, however
// often it is seen.
func (s *Store) Create(r Request, opening Entry) (created bool, err error) {
	tx, err := s.db.Begin()
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.Exec(`INSERT OR IGNORE INTO requests(`+reqColumns+`) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.Key, r.Source, r.Repo, r.Number, r.Channel, r.Thread, r.Title, r.Body, r.Author, r.Session, r.Branch,
		r.StatusRef, r.PRNumber, r.PRURL, r.Handled, r.CreatedAt.UTC().Format(time.RFC3339Nano), timeText(r.AskedAt), r.Reminded, r.PRState, r.Rounds)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if err := addEntry(tx, r.Key, opening); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// Update saves what changed of r (its status reference, pull request,
// last outcome, pending question and reminder, where following its pull
// request is).
func (s *Store) Update(r Request) error {
	_, err := s.db.Exec(`UPDATE requests SET status_ref = ?, pr_number = ?, pr_url = ?, handled = ?, asked_at = ?, reminded = ?, pr_state = ?, rounds = ? WHERE key = ?`,
		r.StatusRef, r.PRNumber, r.PRURL, r.Handled, timeText(r.AskedAt), r.Reminded, r.PRState, r.Rounds, r.Key)
	return err
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func addEntry(tx *sql.Tx, key string, e Entry) (err error) {
	_, err = tx.Exec(`INSERT OR IGNORE INTO entries(request, id, seq, author, body, at, acted, kind, ref, thread, round)
		VALUES(?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM entries WHERE request = ?), ?, ?, ?, ?, ?, ?, ?, ?)`,
		key, e.ID, key, e.Author, e.Body, e.At.UTC().Format(time.RFC3339Nano), e.Acted, e.Kind, e.Ref, e.Thread, e.Round)
	return err
}

// AddEntry records a message of the thread; added is false when it was
// recorded before (a redelivery, the poll seeing what the webhook brought).
func (s *Store) AddEntry(key string, e Entry) (added bool, err error) {
	tx, err := s.db.Begin()
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRow(`SELECT COUNT(*) FROM entries WHERE request = ? AND id = ?`, key, e.ID).Scan(&n); err != nil || n > 0 {
		return false, err
	}
	if err := addEntry(tx, key, e); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// Entries returns the request's thread in order.
func (s *Store) Entries(key string) ([]Entry, error) {
	rows, err := s.db.Query(`SELECT id, author, body, at, acted, kind, ref, thread, round FROM entries WHERE request = ? ORDER BY seq`, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var at string
		if err := rows.Scan(&e.ID, &e.Author, &e.Body, &at, &e.Acted, &e.Kind, &e.Ref, &e.Thread, &e.Round); err != nil {
			return nil, err
		}
		e.At, _ = time.Parse(time.RFC3339Nano, at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// MarkActed records that the daemon was told of entries ids.
func (s *Store) MarkActed(key string, ids []string) error {
	for _, id := range ids {
		if _, err := s.db.Exec(`UPDATE entries SET acted = 1 WHERE request = ? AND id = ?`, key, id); err != nil {
			return err
		}
	}
	return nil
}

// SettlePR marks everything still pending from a request's pull request
// as acted on: the pull request ended, or stopped being followed, and what
// it said is never a later round's input.
func (s *Store) SettlePR(key string) error {
	_, err := s.db.Exec(`UPDATE entries SET acted = 1 WHERE request = ? AND kind != '' AND acted = 0`, key)
	return err
}

// TakeIntoRound records that entries ids were taken into follow-up round
// n (and so acted on).
func (s *Store) TakeIntoRound(key string, ids []string, n int) error {
	for _, id := range ids {
		if _, err := s.db.Exec(`UPDATE entries SET acted = 1, round = ? WHERE request = ? AND id = ?`, n, key, id); err != nil {
			return err
		}
	}
	return nil
}

// Delivery remembers a webhook delivery id; first is false for one seen
// before.
func (s *Store) Delivery(id string, now time.Time) (first bool, err error) {
	res, err := s.db.Exec(`INSERT OR IGNORE INTO deliveries(id, at) VALUES(?, ?)`, id, now.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	// Deliveries are retried for hours, not weeks.
	_, _ = s.db.Exec(`DELETE FROM deliveries WHERE at < ?`, now.Add(-7*24*time.Hour).UTC().Format(time.RFC3339Nano))
	return n == 1, nil
}

// Cursor reads a named position (the last comment seen in a repository).
func (s *Store) Cursor(name string) string {
	var v string
	_ = s.db.QueryRow(`SELECT value FROM cursors WHERE name = ?`, name).Scan(&v)
	return v
}

// SetCursor moves a named position.
func (s *Store) SetCursor(name, value string) error {
	_, err := s.db.Exec(`INSERT INTO cursors(name, value) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value`, name, value)
	return err
}

// Seen says whether a webhook delivery was handled before.
func (s *Store) Seen(id string) bool {
	var n int
	_ = s.db.QueryRow(`SELECT COUNT(*) FROM deliveries WHERE id = ?`, id).Scan(&n)
	return n > 0
}
