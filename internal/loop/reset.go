package loop

import (
	"fmt"
	"time"

	"ralph/internal/breaker"
)

// BreakerReset is a person's request to close the circuit breaker, from
// any surface: `ralph circuit reset`, the monitor, a chat, the dashboard.
type BreakerReset struct {
	// ID identifies a request made while a loop runs, which the loop
	// applies before its next call, once ("" for a reset of a stored
	// state nobody runs, applied at once).
	ID string
	// By is who asked; Why says it in words ("" is "reset by <By>").
	By, Why string
}

// ResetBreaker is the one way a breaker is reset, whether the running loop
// applies a request (Next) or a host changes a stored state: the counters
// are cleared and the breaker is CLOSED with why in its history. A request
// already applied (its ID is the state's ResetID) changes nothing, so a
// request read again after a restart is never applied twice. applied
// reports whether the state changed; note says so for people.
func ResetBreaker(st State, now time.Time, r BreakerReset) (next State, note Note, applied bool) {
	if r.ID != "" && r.ID == st.ResetID {
		return st, Note{}, false
	}
	st = st.clone()
	if r.ID != "" {
		st.ResetID = r.ID
	}
	why := r.Why
	if why == "" {
		why = "reset by " + orSomebody(r.By)
	}
	var d breaker.Decision
	st.Breaker, d = st.Breaker.Reset(now, why)
	return st, Note{Type: EventWarning, Message: fmt.Sprintf("circuit breaker %s → %s: %s", d.From, d.To, why)}, true
}
