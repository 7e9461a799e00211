package loop

import (
	"testing"

	"ralph/internal/breaker"
)

func TestResetBreaker(t *testing.T) {
	now := t0.Add(10 * 60e9)
	open := State{Version: StateVersion, Loop: 7, ResetID: "r1",
		Breaker: breaker.State{Status: breaker.Open, CurrentLoop: 7, NoProgress: 3, SameError: 2, ErrorSignature: "x", Message: "no progress"}}
	tests := []struct {
		name      string
		st        State
		r         BreakerReset
		applied   bool
		resetID   string
		status    breaker.Status
		why, note string
	}{
		{"a stored state is reset at once, with who asked", open, BreakerReset{By: "telegram:ann"}, true, "r1", breaker.Closed,
			"reset by telegram:ann", "circuit breaker OPEN → CLOSED: reset by telegram:ann"},
		{"a reason given is kept", open, BreakerReset{By: "ralph circuit reset", Why: "reset in the monitor"}, true, "r1", breaker.Closed,
			"reset in the monitor", "circuit breaker OPEN → CLOSED: reset in the monitor"},
		{"nobody named is a request", open, BreakerReset{ID: "r2"}, true, "r2", breaker.Closed,
			"reset by a request", "circuit breaker OPEN → CLOSED: reset by a request"},
		{"a request already applied changes nothing", open, BreakerReset{ID: "r1", By: "web"}, false, "r1", breaker.Open, "no progress", ""},
		{"a state without a breaker gets a closed one", State{}, BreakerReset{By: "api"}, true, "", breaker.Closed,
			"reset by api", "circuit breaker CLOSED → CLOSED: reset by api"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.st.Breaker.Status
			got, note, applied := ResetBreaker(tt.st, now, tt.r)
			if applied != tt.applied || got.ResetID != tt.resetID || got.Breaker.Status != tt.status || note.Message != tt.note {
				t.Fatalf("got applied %v, reset id %q, %s, note %q", applied, got.ResetID, got.Breaker.Status, note.Message)
			}
			if got.Breaker.Message != tt.why {
				t.Errorf("breaker message %q, want %q", got.Breaker.Message, tt.why)
			}
			if tt.applied && (got.Breaker.NoProgress != 0 || got.Breaker.SameError != 0 || got.Breaker.ErrorSignature != "") {
				t.Errorf("counters not cleared: %+v", got.Breaker)
			}
			if tt.st.Breaker.Status != before {
				t.Error("ResetBreaker changed its input")
			}
		})
	}
}
