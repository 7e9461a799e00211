package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"ralph/internal/store"
)

// Manager applies the session rules to a project's state files. It reads
// the clock only through its now function, so tests and the engine's
// injected clock decide what time it is. Corrupt files are moved aside with
// store.Recover and reported in the Outcome; missing ones start fresh.
//
// It is meant for one process at a time (the run lock); `ralph session
// reset` while a loop runs may lose one of two concurrent updates, never
// corrupt a file.
type Manager struct {
	st     *store.Store
	expiry time.Duration
	now    func() time.Time
}

// NewManager returns a Manager over st. expiry <= 0 means DefaultExpiry;
// a nil now means time.Now.
func NewManager(st *store.Store, expiry time.Duration, now func() time.Time) *Manager {
	if expiry <= 0 {
		expiry = DefaultExpiry
	}
	if now == nil {
		now = time.Now
	}
	return &Manager{st: st, expiry: expiry, now: now}
}

// Outcome is what a Manager call changed and what the caller should tell
// the user.
type Outcome struct {
	Transitions []Transition // appended to .ralph_session_history
	Notes       []string     // recovered files, expired sessions
}

func (o *Outcome) note(format string, args ...any) {
	o.Notes = append(o.Notes, fmt.Sprintf(format, args...))
}

// Start is the result of Manager.Start.
type Start struct {
	// Resume is the agent session to resume; an empty ID means the next
	// call starts a new session.
	Resume Session
	Ralph  RalphSession
	Outcome
}

// Start prepares the session state before an iteration (or a run): it
// loads or creates the ralph session, and returns the agent session to
// resume if it is still valid. An expired or corrupt agent session is reset
// here, so the caller never resumes a session it should not.
func (m *Manager) Start(loop int) (Start, error) {
	now := m.now()
	var out Start
	r, h, loaded, err := m.loadRalph(now, &out.Outcome)
	if err != nil {
		return out, err
	}
	s, err := Load(m.st.AgentSessionFile())
	var corrupt *store.CorruptError
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.As(err, &corrupt):
		if err := m.recoverFile(corrupt, &out.Outcome, "starting a new agent session"); err != nil {
			return out, err
		}
		r, h = m.reset(r, h, StateActive, ReasonCorrupt, loop, now, &out.Outcome)
	case err != nil:
		return out, err
	case Valid(s, now, m.expiry):
		out.Resume = s
	case s.ID == "": // a file without a session ("null"): nothing to reset
		if err := removeIfExists(m.st.AgentSessionFile()); err != nil {
			return out, err
		}
	default:
		out.note("agent session %s expired (created %s, expiry %s); starting a new one",
			s.ID, s.CreatedAt.UTC().Format(time.RFC3339), m.expiry)
		if err := removeIfExists(m.st.AgentSessionFile()); err != nil {
			return out, err
		}
		r, h = m.reset(r, h, StateActive, ReasonExpired, loop, now, &out.Outcome)
	}
	out.Ralph = r.Touch(now)
	return out, m.commit(loaded, out.Ralph, h, out.Outcome)
}

// Record stores the session id an agent call reported, after a call that
// did not fail (a failed call's session may be broken: reset it instead).
// resumed says whether that call resumed the stored session: then the
// conversation goes on and keeps its creation time even if the agent
// reported a new id. Otherwise a new session begins now. An empty id
// changes nothing.
func (m *Manager) Record(id string, resumed bool, loop int) (Outcome, error) {
	var out Outcome
	if id == "" {
		return out, nil
	}
	if err := checkID(id); err != nil {
		// Not stored: the next call resumes what was there, or starts anew.
		return out, fmt.Errorf("the agent reported session id %.80q, which was dropped: %w", id, err)
	}
	now := m.now()
	path := m.st.AgentSessionFile()
	cur, err := Load(path)
	var corrupt *store.CorruptError
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.As(err, &corrupt):
		if err := m.recoverFile(corrupt, &out, "replacing it"); err != nil {
			return out, err
		}
		cur = Session{}
	case err != nil:
		return out, err
	}
	r, h, loaded, err := m.loadRalph(now, &out)
	if err != nil {
		return out, err
	}
	next := Session{ID: id, CreatedAt: now}
	switch {
	case resumed && cur.ID != "":
		next.CreatedAt = cur.CreatedAt
	case cur.ID == id && !cur.CreatedAt.IsZero():
		next.CreatedAt = cur.CreatedAt // a fresh call that got the same id back
	default:
		from := StateReset
		if cur.ID != "" {
			from = StateActive
		}
		t := Transition{At: now, From: from, To: StateActive, Reason: ReasonNew, Loop: loop}
		out.Transitions = append(out.Transitions, t)
		h = AppendTransition(h, t)
	}
	if next != cur {
		if err := Save(path, next); err != nil {
			return out, err
		}
	}
	return out, m.commit(loaded, r.Touch(now), h, out)
}

// Reset forgets the agent session, so the next call starts fresh, and
// records why. It succeeds when there is no session to forget, and records
// the request anyway: the history should show a reset the user asked for.
func (m *Manager) Reset(reason Reason, loop int) (Outcome, error) {
	now := m.now()
	var out Outcome
	r, h, loaded, err := m.loadRalph(now, &out)
	if err != nil {
		return out, err
	}
	from := StateReset
	path := m.st.AgentSessionFile()
	if _, err := os.Stat(path); err == nil {
		from = StateActive
	}
	if err := removeIfExists(path); err != nil {
		return out, err
	}
	r, h = m.reset(r, h, from, reason, loop, now, &out)
	return out, m.commit(loaded, r, h, out)
}

// History returns .ralph_session_history, oldest first; none yet is an
// empty history, a corrupt file an error.
func (m *Manager) History() ([]Transition, error) {
	h, err := LoadHistory(m.st.SessionHistoryFile())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return h, err
}

// reset is the pure part of a reset: the new ralph session and history.
func (m *Manager) reset(r RalphSession, h []Transition, from State, reason Reason, loop int, now time.Time,
	out *Outcome) (RalphSession, []Transition) {
	t := Transition{At: now, From: from, To: StateReset, Reason: reason, Loop: loop}
	out.Transitions = append(out.Transitions, t)
	return r.AfterReset(reason, now), AppendTransition(h, t)
}

// loadRalph loads the ralph session and history, starting fresh when they
// are missing and recovering them when corrupt. stored is the session as
// the file holds it, zero when there was none to read.
func (m *Manager) loadRalph(now time.Time, out *Outcome) (r RalphSession, h []Transition, stored RalphSession, err error) {
	r, err = LoadRalph(m.st.RalphSessionFile())
	var corrupt *store.CorruptError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r = NewRalphSession(NewID(), now)
	case errors.As(err, &corrupt):
		if err := m.recoverFile(corrupt, out, "starting a new ralph session"); err != nil {
			return r, nil, stored, err
		}
		r = NewRalphSession(NewID(), now)
	case err != nil:
		return r, nil, stored, err
	default:
		stored = r
	}
	if r.ID == "" { // the bash tool blanked the id on reset
		r.ID = NewID()
	}
	if r.StartedAt.IsZero() {
		r.StartedAt = now
	}
	h, err = LoadHistory(m.st.SessionHistoryFile())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.As(err, &corrupt):
		if err := m.recoverFile(corrupt, out, "starting a new history"); err != nil {
			return r, nil, stored, err
		}
	case err != nil:
		return r, nil, stored, err
	}
	return r, h, stored, nil
}

func (m *Manager) recoverFile(ce *store.CorruptError, out *Outcome, then string) error {
	moved, err := store.Recover(ce.Path)
	if err != nil {
		return fmt.Errorf("%w; and could not move it aside: %w", ce, err)
	}
	out.note("%v; moved to %s, %s", ce, moved, then)
	return nil
}

// commit writes the ralph session r (loaded as it was), and the history
// when this call added to it. A call that only moved the session's
// last-used time writes it without syncing it to disk, and not at all when
// the time moved by less than lastUsedStep: that happens at least twice an
// iteration, nothing but a person reads the time, and a power cut that
// loses it costs nothing but an earlier expiry — a change of session is
// written durably.
func (m *Manager) commit(was, r RalphSession, h []Transition, out Outcome) error {
	if len(out.Transitions) == 0 {
		if moved := r.LastUsed.Sub(was.LastUsed); was.ID != "" && was.Touch(r.LastUsed) == r && moved >= 0 && moved < lastUsedStep {
			return nil
		}
		return saveRalphView(m.st.RalphSessionFile(), r)
	}
	if err := SaveRalph(m.st.RalphSessionFile(), r); err != nil {
		return err
	}
	return SaveHistory(m.st.SessionHistoryFile(), h)
}

// lastUsedStep is how far the ralph session's last-used time may lag.
const lastUsedStep = time.Minute

func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
