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
	noticesKept   = 10000
	questionsKept = 10000
)

const storeSchema = `
CREATE TABLE IF NOT EXISTS updates (
	id INTEGER NOT NULL UNIQUE,
	at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS notices (
	id TEXT PRIMARY KEY,
	at TEXT NOT NULL
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
// it: fresh is false for one handled before. A crash after the mark loses
// the command rather than repeating it: a person can send it again, a
// task started twice cannot be taken back. The last updatesKept are
// remembered, in the order they came (not by id: see offset).
func (s *store) markUpdate(id int64, now time.Time) (fresh bool, err error) {
	res, err := s.db.Exec(`INSERT OR IGNORE INTO updates(id, at) VALUES(?, ?)`, id, now.UTC().Format(time.RFC3339))
	if err != nil {
		return false, err
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return false, nil
	}
	_, err = s.db.Exec(`DELETE FROM updates WHERE rowid <= (SELECT MAX(rowid) FROM updates) - ?`, updatesKept)
	return true, err
}

// offsetAge is how old the last update may be for polling to resume
// after it. After a week without updates Telegram numbers the next one
// at random, maybe below the last: then polling starts from the first
// update Telegram still holds (it forgets the ones it was told were
// received), and the remembered ids keep any of those from being handled
// twice.
const offsetAge = 6 * 24 * time.Hour

// offset is the update polling resumes after (0: the first Telegram
// holds).
func (s *store) offset(now time.Time) (int64, error) {
	var id int64
	var at string
	err := s.db.QueryRow(`SELECT id, at FROM updates ORDER BY rowid DESC LIMIT 1`).Scan(&id, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if t, err := time.Parse(time.RFC3339, at); err != nil || now.Sub(t) > offsetAge {
		return 0, nil
	}
	return id, nil
}

// markNotice remembers that the daemon's notice id was sent: the outbox
// delivers at least once, and a notice tried again after it got through
// (the daemon killed before it recorded the delivery, a try that timed
// out) is not sent twice.
func (s *store) markNotice(id string, at time.Time) error {
	if _, err := s.db.Exec(`INSERT OR IGNORE INTO notices(id, at) VALUES(?, ?)`, id, at.UTC().Format(time.RFC3339)); err != nil {
		return err
	}
	_, err := s.db.Exec(`DELETE FROM notices WHERE rowid NOT IN (SELECT rowid FROM notices ORDER BY rowid DESC LIMIT ?)`, noticesKept)
	return err
}

// noticeSent says whether notice id was sent.
func (s *store) noticeSent(id string) (bool, error) {
	var n int
	err := s.db.QueryRow(`SELECT COUNT(*) FROM notices WHERE id = ?`, id).Scan(&n)
	return n > 0, err
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
