package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/ratelimit"
	"ralph/internal/redact"
)

// LoopStateName is the loop's state document (loop.State). Before version 2
// it held only the counters, next to the breaker's and the rate limiter's
// files; those files are now views written from it.
const LoopStateName = ".loop_state"

// LoopStateFile is the state document's path.
func (s *Store) LoopStateFile() string { return s.path(LoopStateName) }

// stateDoc is the document on disk: the state, and the record of the
// iteration that produced it. Writing both in one atomic rename is what
// keeps a kill from separating them: a record the document names but
// metrics.jsonl lacks is appended when the state is next loaded or saved.
type stateDoc struct {
	loop.State
	Record *loop.Metrics `json:"last_record,omitempty"`
}

// LoadState reads the loop's state. A missing document is migrated from
// the older files (the counters-only .loop_state, .circuit_breaker_state,
// .rate_limit_state); a corrupt file is set aside and reported, never
// trusted. found is false when there was nothing to read at all. A record
// the last save did not get to append to metrics.jsonl is appended now.
// A state older than version 3 comes back as version 2: its agent session
// is still in .claude_session_id, which the caller adopts (the store does
// not read session files).
func (s *Store) LoadState() (st loop.State, found bool, warnings []string, err error) {
	var doc stateDoc
	ok, warn := s.readStateFile(s.LoopStateFile(), &doc, func() error { return doc.State.Validate() })
	warnings = append(warnings, warn...)
	if ok && doc.Version >= 2 {
		if doc.Record != nil {
			if err := s.ensureRecord(*doc.Record); err != nil {
				warnings = append(warnings, "metrics: "+err.Error())
			}
		}
		return doc.State, true, warnings, nil
	}
	// Older layout (or a document that had to be set aside): the breaker
	// and the rate limit from their own files.
	if ok {
		st = doc.State
		found = true
	}
	var b breaker.State
	if ok, warn := s.readStateFile(s.BreakerFile(), &b, func() error { return b.Validate() }); ok {
		st.Breaker, found = b, true
	} else {
		warnings = append(warnings, warn...)
	}
	var calls ratelimit.State
	if ok, warn := s.readStateFile(s.RateLimitFile(), &calls, func() error { return calls.Validate() }); ok {
		st.Calls, found = calls, true
	} else {
		warnings = append(warnings, warn...)
	}
	st.Version = 2
	return st, found, warnings, nil
}

// readStateFile reads one JSON file into v and validates it. It reports
// false when the file is missing or had to be set aside (with a warning).
func (s *Store) readStateFile(path string, v any, validate func() error) (bool, []string) {
	err := ReadJSON(path, v)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err == nil {
		if verr := validate(); verr != nil {
			err = fmt.Errorf("%s: %w", path, verr)
		}
	}
	if err == nil {
		return true, nil
	}
	moved, rerr := Recover(path)
	msg := fmt.Sprintf("state file is corrupt, starting it afresh: %v", err)
	if rerr == nil {
		msg += " (kept as " + filepath.Base(moved) + ")"
	}
	return false, []string{msg}
}

// SaveState writes the state document atomically, with rec (the record of
// the iteration that produced st, nil when none) inside it, then appends
// rec to metrics.jsonl unless it is already there, then rewrites the views
// (.circuit_breaker_state, .rate_limit_state) for the bash tool's readers.
// Only the document is the truth: a failure after it is reported but
// loses nothing.
func (s *Store) SaveState(st loop.State, rec *loop.Metrics) error {
	// encodeStateDoc masks the document and the metrics line.
	// Compact: the document is ralph's own (people read `ralph status` and
	// the views), and indenting it again at every save was an eighth of a
	// loop's own CPU once its window held a few hundred calls.
	data, line, err := encodeStateDoc(st, rec)
	if err != nil {
		return fmt.Errorf("save loop state: %w", err)
	}
	if err := s.writeAtomic(s.LoopStateFile(), data, 0o644, true); err != nil {
		return fmt.Errorf("save loop state: %w", err)
	}
	var errs []error
	if rec != nil {
		if err := s.ensureLine(recordID{Loop: rec.Loop, StartedAt: rec.StartedAt}, line); err != nil {
			errs = append(errs, fmt.Errorf("metrics: %w", err))
		}
	}
	if err := s.writeView(s.BreakerFile(), st.Breaker); err != nil {
		errs = append(errs, fmt.Errorf("circuit breaker view: %w", err))
	}
	if err := s.writeCallsView(s.RateLimitFile(), st.Calls); err != nil {
		errs = append(errs, fmt.Errorf("rate limit view: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return &AfterSaveError{Err: err}
	}
	return nil
}

// AfterSaveError is a failure after the state document was saved (the
// metrics line, a view): nothing is lost — the next load appends the
// record — so a loop reports it and goes on.
type AfterSaveError struct{ Err error }

func (e *AfterSaveError) Error() string { return e.Err.Error() }
func (e *AfterSaveError) Unwrap() error { return e.Err }

// tailWindows are how much of metrics.jsonl's end is read to find its last
// record, tried in turn: records are a few hundred bytes, and a save must
// not read the whole file.
var tailWindows = []int64{4 << 10, 64 << 10, 1 << 20}

// ensureRecord appends rec to metrics.jsonl unless its last complete record
// is rec already (same loop and start). A torn last line — a killed append
// — is cut off first, so it cannot swallow the record written after it.
func (s *Store) ensureRecord(rec loop.Metrics) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	// The record quotes the agent (its summary, its status block).
	return s.ensureLine(recordID{Loop: rec.Loop, StartedAt: rec.StartedAt}, redact.Encoded(line))
}

// encodeStateDoc is the state document as json.Marshal(stateDoc) writes it,
// masked, and its record as metrics.jsonl holds it: the record (the
// larger part, with the state before its call in it) is encoded and masked
// once for both. Masking goes string by string, each after its own key, so
// the two parts masked apart are the document masked whole.
func encodeStateDoc(st loop.State, rec *loop.Metrics) (doc, line []byte, err error) {
	doc, err = json.Marshal(st)
	if err != nil {
		return nil, nil, err
	}
	doc = redact.Encoded(doc)
	if rec != nil {
		if line, err = json.Marshal(rec); err != nil {
			return nil, nil, err
		}
		line = redact.Encoded(line)
		// The embedded State's fields, then last_record: the struct's order.
		doc = append(append(append(doc[:len(doc)-1:len(doc)-1], `,"last_record":`...), line...), '}')
	}
	return append(doc, '\n'), line, nil
}

// ensureLine appends line, the masked record id, unless it is there.
func (s *Store) ensureLine(id recordID, line []byte) error {
	path := s.MetricsFile()
	// Confined: a metrics.jsonl that is a link out of the project is
	// refused, not written through. O_CREATE makes its directory too.
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	last, end, size, err := s.lastAppended(path, f)
	if err != nil {
		return err
	}
	if last != nil && last.Loop == id.Loop && last.StartedAt.Equal(id.StartedAt) {
		return nil
	}
	if end != size {
		if err := f.Truncate(end); err != nil {
			return err
		}
	}
	if _, err := f.WriteAt(append(line[:len(line):len(line)], '\n'), end); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	s.noteAppended(path, f, id)
	return nil
}

// lastAppended is lastRecord, told from memory when the file is as this
// store's last append left it; size is the file's.
func (s *Store) lastAppended(path string, f *os.File) (last *recordID, end, size int64, err error) {
	info, err := f.Stat()
	if err != nil {
		return nil, 0, 0, err
	}
	if m := s.views; m != nil {
		m.mu.Lock()
		a, ok := m.appended[path]
		m.mu.Unlock()
		if ok && os.SameFile(a.file, info) && a.file.Size() == info.Size() && a.file.ModTime().Equal(info.ModTime()) {
			return &a.id, info.Size(), info.Size(), nil
		}
	}
	last, end, err = lastRecord(f)
	return last, end, info.Size(), err
}

func (s *Store) noteAppended(path string, f *os.File, id recordID) {
	m := s.views
	info, err := f.Stat()
	if m == nil || err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.appended == nil {
		m.appended = map[string]appendedLine{}
	}
	m.appended[path] = appendedLine{id: id, file: info}
}

// lastRecord finds the last complete line of f and decodes its identity;
// end is the offset just after that line (where an append must start).
func lastRecord(f *os.File) (*recordID, int64, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := info.Size()
	for _, w := range tailWindows {
		off := max(size-w, 0)
		buf := make([]byte, size-off)
		if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		cut := bytes.LastIndexByte(buf, '\n')
		if cut < 0 {
			if off == 0 {
				return nil, 0, nil // empty, or one torn line
			}
			continue
		}
		end := off + int64(cut) + 1
		start := bytes.LastIndexByte(buf[:cut], '\n')
		if start < 0 && off > 0 {
			continue // the line starts before the window
		}
		var id recordID
		if json.Unmarshal(buf[start+1:cut], &id) != nil {
			return nil, end, nil
		}
		return &id, end, nil
	}
	// A last line longer than every window is not a record of ours; the
	// next one goes after it.
	return nil, size, nil
}

type recordID struct {
	Loop      int       `json:"loop"`
	StartedAt time.Time `json:"started_at"`
}

// ReadState reads the state document without recovering anything, for
// commands that only look (status, circuit status, doctor). ok is false
// when there is no version-2 (or later) document; the caller may fall back
// to the views.
func (s *Store) ReadState() (st loop.State, ok bool, err error) {
	var doc stateDoc
	err = ReadJSON(s.LoopStateFile(), &doc)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return loop.State{}, false, nil
	case err != nil:
		return loop.State{}, false, err
	}
	if err := doc.State.Validate(); err != nil {
		return loop.State{}, false, &CorruptError{Path: s.LoopStateFile(), Err: err}
	}
	return doc.State, doc.Version >= 2, nil
}
