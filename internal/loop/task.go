package loop

import (
	"time"

	"ralph/internal/breaker"
)

// ForTask is the state a new task on a daemon session starts from: its
// loops are numbered from 1 and its breaker, stop rules, corrections and
// last words are its own, as a fresh `ralph run` has — the previous task's
// strikes say nothing about this one's work — and so is its agent session:
// a new task is a new conversation. What belongs to the session
// and its account stays: the calls of the sliding hour, the agents held by
// usage limits and the agent in use, and the running totals of tokens and
// cost (a task's own cost is what it adds to them).
func ForTask(st State, now time.Time) State {
	return State{
		Version:     st.Version,
		Breaker:     breaker.New(now),
		Calls:       st.Calls,
		Tokens:      st.Tokens,
		CostUSD:     st.CostUSD,
		Usage:       st.Usage,
		Agent:       st.Agent,
		AgentLimits: st.AgentLimits,
		ResetID:     st.ResetID,
	}
}
