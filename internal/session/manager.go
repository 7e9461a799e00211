package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"ralph/internal/store"
)

// Manager keeps a project's session files in step with the agent session
// the loop's state holds (the state decides: loop.Resume and the rules
// beside it). It reads the clock only through its now function, so tests
// decide what time it is. Corrupt ralph session and history files are
// moved aside with store.Recover and reported in the Outcome; missing ones
// start fresh.
//
// It is meant for one process at a time (the run lock).
type Manager struct {
	st  *store.Store
	now func() time.Time
	// stored is the ralph session as its file held it at the last load.
	stored RalphSession
}

// NewManager returns a Manager over st; a nil now means time.Now.
func NewManager(st *store.Store, now func() time.Time) *Manager {
	if now == nil {
		now = time.Now
	}
	return &Manager{st: st, now: now}
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

// Follow brings the files up to the agent session the loop's state now
// holds (the state decides; these files are for people and the bash tool's
// readers): an empty to is a reset for why, anything else the session
// .claude_session_id shows, a new one recorded in the history.
func (m *Manager) Follow(to Session, why Reason, loop int) (Outcome, error) {
	if to.ID == "" {
		return m.Reset(why, loop)
	}
	var out Outcome
	now := m.now()
	path := m.st.AgentSessionFile()
	cur, err := Load(path)
	if err != nil {
		cur = Session{}
	}
	r, h, err := m.loadRalph(now, &out)
	if err != nil {
		return out, err
	}
	if cur.ID != to.ID {
		from := StateReset
		if cur.ID != "" {
			from = StateActive
		}
		t := Transition{At: now, From: from, To: StateActive, Reason: ReasonNew, Loop: loop}
		out.Transitions = append(out.Transitions, t)
		h = AppendTransition(h, t)
	}
	if cur.ID != to.ID || !cur.CreatedAt.Equal(to.CreatedAt) || cur.Legacy {
		if err := Save(path, to); err != nil {
			return out, err
		}
	}
	return out, m.commit(r.Touch(now), h, out)
}

// Reset forgets the agent session, so the next call starts fresh, and
// records why. It succeeds when there is no session to forget, and records
// the request anyway: the history should show a reset the user asked for.
func (m *Manager) Reset(reason Reason, loop int) (Outcome, error) {
	now := m.now()
	var out Outcome
	r, h, err := m.loadRalph(now, &out)
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
	return out, m.commit(r, h, out)
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
// are missing and recovering them when corrupt. m.stored is the session as
// its file held it, zero when there was none to read.
func (m *Manager) loadRalph(now time.Time, out *Outcome) (RalphSession, []Transition, error) {
	r, err := LoadRalph(m.st.RalphSessionFile())
	m.stored = RalphSession{}
	var corrupt *store.CorruptError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r = NewRalphSession(NewID(), now)
	case errors.As(err, &corrupt):
		if err := m.recoverFile(corrupt, out, "starting a new ralph session"); err != nil {
			return r, nil, err
		}
		r = NewRalphSession(NewID(), now)
	case err != nil:
		return r, nil, err
	default:
		m.stored = r
	}
	if r.ID == "" { // the bash tool blanked the id on reset
		r.ID = NewID()
	}
	if r.StartedAt.IsZero() {
		r.StartedAt = now
	}
	h, err := LoadHistory(m.st.SessionHistoryFile())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.As(err, &corrupt):
		if err := m.recoverFile(corrupt, out, "starting a new history"); err != nil {
			return r, nil, err
		}
	case err != nil:
		return r, nil, err
	}
	return r, h, nil
}

func (m *Manager) recoverFile(ce *store.CorruptError, out *Outcome, then string) error {
	moved, err := store.Recover(ce.Path)
	if err != nil {
		return fmt.Errorf("%w; and could not move it aside: %w", ce, err)
	}
	out.note("%v; moved to %s, %s", ce, moved, then)
	return nil
}

// commit writes the ralph session, and the history when this call added
// to it. A call that only moved the session's last-used time writes it
// without syncing it to disk: that happens every iteration, and a power cut
// that loses it costs nothing but an earlier expiry — a change of session
// is written durably.
//
// A call that only moved the session's last-used time by less than
// lastUsedStep writes nothing: that happens every iteration, nothing but a
// person reads the time, and a change of session is written durably.
func (m *Manager) commit(r RalphSession, h []Transition, out Outcome) error {
	if len(out.Transitions) == 0 {
		was := m.stored
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
