package telegram

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // as the daemon's store
)

// store keeps what the bot must not forget across restarts, in its own
// SQLite file next to the daemon's (RALPH_HOME/telegram.db): the updates
// it handled (so a restart never replays `/ralph start`, and a repeated
// update is ignored) and which of its messages asked which task's
// question (so a reply after a restart still answers it).
type store struct{ db *sql.DB }

// Bounds of what the store keeps.
const (
	updatesKept   = 1000
	questionsKept = 10000
)

const storeSchema = `
CREATE TABLE IF NOT EXISTS updates (
	id INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS questions (
	chat_id    INTEGER NOT NULL,
	message_id INTEGER NOT NULL,
	task_id    TEXT NOT NULL,
	session    TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (chat_id, message_id)
);
`

func openStore(path string) (*store, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(storeSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &store{db: db}, nil
}

func (s *store) close() error { return s.db.Close() }

// markUpdate records an update as handled before anything is done about
// it: fresh is false for one handled before (or older than every one
// remembered). A crash after the mark loses the command rather than
// repeating it: a person can send it again, a task started twice cannot
// be taken back.
func (s *store) markUpdate(id int64) (fresh bool, err error) {
	tx, err := s.db.Begin()
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var lowest, n int64
	if err := tx.QueryRow(`SELECT COALESCE(MIN(id), 0), COUNT(*) FROM updates`).Scan(&lowest, &n); err != nil {
		return false, err
	}
	if n >= updatesKept && id < lowest {
		return false, nil
	}
	res, err := tx.Exec(`INSERT OR IGNORE INTO updates(id) VALUES(?)`, id)
	if err != nil {
		return false, err
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return false, nil
	}
	if n+1 > updatesKept {
		if _, err := tx.Exec(`DELETE FROM updates WHERE id NOT IN (SELECT id FROM updates ORDER BY id DESC LIMIT ?)`, updatesKept); err != nil {
			return false, err
		}
	}
	return true, tx.Commit()
}

// offset is the last update handled (0: none): polling resumes after it.
func (s *store) offset() (int64, error) {
	var id int64
	err := s.db.QueryRow(`SELECT COALESCE(MAX(id), 0) FROM updates`).Scan(&id)
	return id, err
}

// addQuestion remembers that message msg in chat asked task's question.
func (s *store) addQuestion(chat int64, msg int, taskID, session string, at time.Time) error {
	if _, err := s.db.Exec(`INSERT OR REPLACE INTO questions(chat_id, message_id, task_id, session, created_at) VALUES(?, ?, ?, ?, ?)`,
		chat, msg, taskID, session, at.UTC().Format(time.RFC3339)); err != nil {
		return err
	}
	_, err := s.db.Exec(`DELETE FROM questions WHERE rowid NOT IN (SELECT rowid FROM questions ORDER BY created_at DESC, rowid DESC LIMIT ?)`, questionsKept)
	return err
}

// question finds the task whose question message msg in chat asked.
func (s *store) question(chat int64, msg int) (taskID, session string, ok bool, err error) {
	err = s.db.QueryRow(`SELECT task_id, session FROM questions WHERE chat_id = ? AND message_id = ?`, chat, msg).Scan(&taskID, &session)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	return taskID, session, err == nil, err
}
