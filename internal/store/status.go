package store

import (
	"time"
	"unicode/utf8"
)

// Status is status.json: what a monitor, a script or a person needs to know
// about a running or finished loop without reading logs. The first block of
// fields keeps the names and meaning of the bash tool's status.json, so its
// monitors keep working; they are always written, even when empty.
type Status struct {
	Timestamp          time.Time `json:"timestamp"` // when this status was written
	LoopCount          int       `json:"loop_count"`
	CallsMadeThisHour  int       `json:"calls_made_this_hour"`
	MaxCallsPerHour    int       `json:"max_calls_per_hour"`
	TokensUsedThisHour int64     `json:"tokens_used_this_hour"`
	MaxTokensPerHour   int64     `json:"max_tokens_per_hour"` // 0: no limit
	LastAction         string    `json:"last_action"`         // e.g. "executing", "waiting", "completed"
	Status             string    `json:"status"`              // e.g. "running", "waiting", "stopped"
	ExitReason         string    `json:"exit_reason"`         // DESIGN.md's exit reasons; "" while running
	// NextReset is when the next call fits the hourly budget again (RFC 3339,
	// "" when not limited). A string, as in the bash tool, so a monitor that
	// reads both tools' files needs no special case for an empty value.
	NextReset string `json:"next_reset"`

	StartedAt      time.Time `json:"started_at,omitzero"` // start of this `ralph run`
	PID            int       `json:"pid,omitempty"`       // of that ralph process
	RalphSessionID string    `json:"ralph_session_id,omitempty"`
	AgentSessionID string    `json:"agent_session_id,omitempty"` // the session being resumed
	Agent          string    `json:"agent,omitempty"`            // e.g. "claude"

	Breaker BreakerStatus `json:"circuit_breaker"`
	Wait    *Wait         `json:"wait,omitempty"` // set while ralph sleeps
	Totals  Totals        `json:"totals"`         // since StartedAt

	LastAnalysis string `json:"last_analysis,omitempty"` // summary of the last agent output
	// LastConfidenceScore is the last analysis's confidence_score (0–100):
	// how much of it rests on structure rather than wording. It explains a
	// decision; it never makes one.
	LastConfidenceScore    *int     `json:"last_confidence_score,omitempty"`
	ClarificationQuestions []string `json:"clarification_questions,omitempty"`
	// Verified: the run's completion passed the project's verify command
	// (VERIFY_CMD); absent where no gate is set or nothing was claimed.
	Verified bool `json:"verified,omitempty"`
}

// BreakerStatus is the circuit breaker as status.json shows it; the full
// state lives in .circuit_breaker_state.
type BreakerStatus struct {
	State  string `json:"state"`            // CLOSED, HALF_OPEN or OPEN
	Reason string `json:"reason,omitempty"` // why it is not CLOSED
}

// Wait is a pause the loop is in, so a monitor can show a countdown.
type Wait struct {
	Kind   string    `json:"kind"`  // e.g. "rate_limit", "usage_limit", "delay", "breaker_cooldown"
	Until  time.Time `json:"until"` // when the loop goes on
	Reason string    `json:"reason,omitempty"`
}

// Totals add up the agent's reported usage.
type Totals struct {
	InputTokens              int64   `json:"input_tokens"`
	OutputTokens             int64   `json:"output_tokens"`
	CacheReadInputTokens     int64   `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64   `json:"cache_creation_input_tokens"`
	CostUSD                  float64 `json:"cost_usd"`
}

// Limits on free text in status.json: it is rewritten every iteration and
// polled by monitors, so an agent's essay must not make it large.
const (
	maxStatusText      = 4096 // bytes per text field
	maxStatusQuestions = 20
)

// WriteStatus writes st to path atomically. Free-text fields, which may
// quote agent output or error messages, are passed through Redact and
// bounded first; st itself is not modified.
func WriteStatus(path string, st Status) error {
	return WriteViewJSON(path, sanitize(st)) // a view: rewritten at every transition
}

// ReadStatus reads a status.json (as written by WriteStatus or the bash
// tool). Errors are those of ReadJSON.
func ReadStatus(path string) (Status, error) {
	var st Status
	err := ReadJSON(path, &st)
	return st, err
}

func sanitize(st Status) Status {
	// Cutting before redacting bounds the regexp work for a huge text; the
	// slack keeps a secret that straddles the first cut far from the final
	// one, so no recognisable half of it survives.
	clean := func(s string) string { return truncate(Redact(truncate(s, 2*maxStatusText)), maxStatusText) }
	st.LastAction = clean(st.LastAction)
	st.Status = clean(st.Status)
	st.ExitReason = clean(st.ExitReason)
	st.Breaker.Reason = clean(st.Breaker.Reason)
	st.LastAnalysis = clean(st.LastAnalysis)
	if st.Wait != nil {
		w := *st.Wait
		w.Reason = clean(w.Reason)
		st.Wait = &w
	}
	if qs := st.ClarificationQuestions; qs != nil {
		qs = qs[:min(len(qs), maxStatusQuestions)]
		st.ClarificationQuestions = make([]string, len(qs))
		for i, q := range qs {
			st.ClarificationQuestions[i] = clean(q)
		}
	}
	return st
}

// truncate cuts s to at most n bytes on a character boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
