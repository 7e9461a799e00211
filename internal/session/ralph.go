package session

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"ralph/internal/store"
)

// HistoryLimit is how many transitions .ralph_session_history keeps.
const HistoryLimit = 50

// Reason says why the agent session changed. The reset reasons mirror the
// events that end a conversation; unknown values read from old files are
// kept as they are.
type Reason string

// Reasons for a transition.
const (
	ReasonBreakerOpen Reason = "circuit_breaker_open" // the loop stopped on an open breaker
	ReasonCompletion  Reason = "completion"           // the work is done; the next run starts clean
	ReasonInterrupt   Reason = "interrupted"          // the user stopped the loop
	ReasonIsError     Reason = "is_error"             // the agent reported failure; its session may be broken
	ReasonManual      Reason = "manual"               // `ralph session reset`
	ReasonExpired     Reason = "expired"              // older than SESSION_EXPIRY_HOURS
	ReasonCorrupt     Reason = "corrupt_file"         // the session file did not read; moved aside
	ReasonNew         Reason = "new_session"          // not a reset: a new agent session began
)

// IsReset reports whether r ends an agent session (every known reason but
// ReasonNew).
func (r Reason) IsReset() bool {
	switch r {
	case ReasonBreakerOpen, ReasonCompletion, ReasonInterrupt, ReasonIsError,
		ReasonManual, ReasonExpired, ReasonCorrupt:
		return true
	}
	return false
}

// State is the agent session's state in a transition; the names are the
// bash tool's.
type State string

// Agent session states.
const (
	StateActive State = "active" // a session id is stored and will be resumed
	StateReset  State = "reset"  // none is stored; the next call starts fresh
)

// Transition is one entry of .ralph_session_history.
type Transition struct {
	At     time.Time `json:"at"`
	From   State     `json:"from_state"`
	To     State     `json:"to_state"`
	Reason Reason    `json:"reason"`
	Loop   int       `json:"loop"` // the iteration it happened in; 0 outside the loop
}

// UnmarshalJSON also reads the bash tool's key names (timestamp,
// loop_number).
func (t *Transition) UnmarshalJSON(b []byte) error {
	var aux struct {
		At         flexTime `json:"at"`
		Timestamp  flexTime `json:"timestamp"`
		From       State    `json:"from_state"`
		To         State    `json:"to_state"`
		Reason     Reason   `json:"reason"`
		Loop       *int     `json:"loop"`
		LoopNumber int      `json:"loop_number"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*t = Transition{At: firstSet(aux.At, aux.Timestamp), From: aux.From, To: aux.To, Reason: aux.Reason, Loop: aux.LoopNumber}
	if aux.Loop != nil {
		t.Loop = *aux.Loop
	}
	return nil
}

// AppendTransition returns h with t added, keeping only the newest
// HistoryLimit entries. h is not modified.
func AppendTransition(h []Transition, t Transition) []Transition {
	out := append(slices.Clip(h), t)
	if len(out) > HistoryLimit {
		out = slices.Clone(out[len(out)-HistoryLimit:])
	}
	return out
}

// RalphSession is .ralph_session.
type RalphSession struct {
	ID              string    `json:"ralph_session_id"`
	StartedAt       time.Time `json:"started_at"`
	LastUsed        time.Time `json:"last_used"`
	ResetCount      int       `json:"reset_count"`
	LastResetReason Reason    `json:"last_reset_reason,omitempty"`
	LastResetAt     time.Time `json:"last_reset_at,omitzero"`
}

// NewRalphSession starts a ralph session with the given id (see NewID).
func NewRalphSession(id string, now time.Time) RalphSession {
	return RalphSession{ID: id, StartedAt: now, LastUsed: now}
}

// Touch returns r marked as used at now.
func (r RalphSession) Touch(now time.Time) RalphSession {
	r.LastUsed = now
	return r
}

// AfterReset returns r after an agent session reset for reason at now.
func (r RalphSession) AfterReset(reason Reason, now time.Time) RalphSession {
	r.ResetCount++
	r.LastResetReason = reason
	r.LastResetAt = now
	r.LastUsed = now
	return r
}

// UnmarshalJSON also reads the bash tool's form, {session_id, created_at,
// last_used, reset_at, reset_reason}, where times may be "" after a reset.
func (r *RalphSession) UnmarshalJSON(b []byte) error {
	var aux struct {
		ID              string   `json:"ralph_session_id"`
		LegacyID        string   `json:"session_id"`
		StartedAt       flexTime `json:"started_at"`
		CreatedAt       flexTime `json:"created_at"`
		LastUsed        flexTime `json:"last_used"`
		ResetCount      *int     `json:"reset_count"`
		LastResetReason Reason   `json:"last_reset_reason"`
		ResetReason     Reason   `json:"reset_reason"`
		LastResetAt     flexTime `json:"last_reset_at"`
		ResetAt         flexTime `json:"reset_at"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*r = RalphSession{
		ID:              aux.ID,
		StartedAt:       firstSet(aux.StartedAt, aux.CreatedAt),
		LastUsed:        time.Time(aux.LastUsed),
		LastResetReason: aux.LastResetReason,
		LastResetAt:     firstSet(aux.LastResetAt, aux.ResetAt),
	}
	if r.ID == "" {
		r.ID = aux.LegacyID
	}
	if r.LastResetReason == "" {
		r.LastResetReason = aux.ResetReason
	}
	switch {
	case aux.ResetCount != nil:
		r.ResetCount = *aux.ResetCount
	case r.LastResetReason != "":
		r.ResetCount = 1 // the bash tool kept only the last reset
	}
	return nil
}

// NewID returns a random version 4 UUID, so ralph session ids from
// different machines and runs never collide.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// LoadRalph reads .ralph_session. Errors are those of store.ReadJSON.
func LoadRalph(path string) (RalphSession, error) {
	var r RalphSession
	err := store.ReadJSON(path, &r)
	return r, err
}

// SaveRalph writes .ralph_session atomically.
func SaveRalph(path string, r RalphSession) error { return store.WriteJSON(path, r) }

// saveRalphView is SaveRalph without the fsyncs (store.WriteViewJSON).
func saveRalphView(path string, r RalphSession) error { return store.WriteViewJSON(path, r) }

// LoadHistory reads .ralph_session_history, oldest first. Errors are those
// of store.ReadJSON. A longer history than HistoryLimit (edited by hand) is
// cut to the newest entries.
func LoadHistory(path string) ([]Transition, error) {
	var h []Transition
	if err := store.ReadJSON(path, &h); err != nil {
		return nil, err
	}
	if len(h) > HistoryLimit {
		h = h[len(h)-HistoryLimit:]
	}
	return h, nil
}

// SaveHistory writes .ralph_session_history atomically, newest
// HistoryLimit entries only.
func SaveHistory(path string, h []Transition) error {
	if len(h) > HistoryLimit {
		h = h[len(h)-HistoryLimit:]
	}
	if h == nil {
		h = []Transition{} // "[]", which the bash tool's jq expects, not "null"
	}
	return store.WriteJSON(path, h)
}
