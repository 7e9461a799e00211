package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"ralph/internal/loop"
	"ralph/internal/store"
)

// maxIDLen bounds an agent session id; real ones are UUID-sized.
const maxIDLen = 256

// Session is the agent session ralph resumes, as kept in .claude_session_id.
type Session struct {
	ID        string    `json:"session_id"`
	CreatedAt time.Time `json:"timestamp"` // creation of the session, not last use
	// Legacy is set when the file held only a bare id (the bash tool's old
	// format); CreatedAt is then the file's modification time.
	Legacy bool `json:"-"`
}

// UnmarshalJSON also accepts "created_at" for the creation time, which some
// writers of the bash era used.
func (s *Session) UnmarshalJSON(b []byte) error {
	var aux struct {
		ID        *string  `json:"session_id"`
		Timestamp flexTime `json:"timestamp"`
		CreatedAt flexTime `json:"created_at"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.ID == nil {
		return errors.New(`no "session_id" key`)
	}
	*s = Session{ID: *aux.ID, CreatedAt: firstSet(aux.Timestamp, aux.CreatedAt)}
	return nil
}

// Load reads an agent session file. A missing file gives an error matching
// fs.ErrNotExist; a file that is neither the JSON form nor a bare id gives a
// *store.CorruptError. A file holding "null" (the bash tool's jq output for
// no session) loads as a Session without id, which is not Valid.
func Load(path string) (Session, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Session{}, err
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var s Session
		if err := store.DecodeJSON(path, data, &s); err != nil {
			return Session{}, err
		}
		if s.ID != "" {
			if err := checkID(s.ID); err != nil {
				return Session{}, &store.CorruptError{Path: path, Err: err}
			}
		}
		return s, nil
	}
	return loadLegacy(path, data)
}

// loadLegacy reads the bash tool's plain format: the id on the first
// non-empty line. Its age came from the file's modification time, so that
// is the creation time here too.
func loadLegacy(path string, data []byte) (Session, error) {
	lineNo := 0
	var id []byte
	for line := range bytes.Lines(data) {
		lineNo++
		if id = bytes.TrimSpace(line); len(id) > 0 {
			break
		}
	}
	if len(id) == 0 {
		return Session{}, &store.CorruptError{Path: path, Line: 1, Col: 1, Err: errors.New("empty file")}
	}
	if string(id) == "null" {
		return Session{Legacy: true}, nil
	}
	if err := checkID(string(id)); err != nil {
		return Session{}, &store.CorruptError{Path: path, Line: lineNo, Col: 1, Err: err}
	}
	info, err := os.Stat(path)
	if err != nil {
		return Session{}, err
	}
	return Session{ID: string(id), CreatedAt: info.ModTime(), Legacy: true}, nil
}

// checkID rejects what cannot be a session id: the core's rule
// (loop.ValidSessionID), for ids read from a file as for ids an agent
// reports.
func checkID(id string) error { return loop.ValidSessionID(id) }

// Save writes s atomically in the JSON form (legacy files are upgraded on
// their next save).
func Save(path string, s Session) error {
	if err := checkID(s.ID); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if s.CreatedAt.IsZero() {
		return fmt.Errorf("save %s: session %s has no creation time", path, s.ID)
	}
	return store.WriteJSON(path, s)
}

// flexTime decodes the time formats state files have held: RFC 3339 with
// or without fraction, and "" or null for "not set" (the bash tool wrote
// empty strings after a reset).
type flexTime time.Time

func (t *flexTime) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil || *s == "" {
		*t = flexTime{}
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return err
	}
	*t = flexTime(v)
	return nil
}

// firstSet returns the first set time, for files that may use either of two
// key names.
func firstSet(ts ...flexTime) time.Time {
	for _, t := range ts {
		if !time.Time(t).IsZero() {
			return time.Time(t)
		}
	}
	return time.Time{}
}
