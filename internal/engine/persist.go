package engine

import (
	"time"

	"ralph/internal/loop"
	"ralph/internal/ratelimit"
	"ralph/internal/reason"
	"ralph/internal/scarce"
	"ralph/internal/store"
)

func (e *Engine) writeStatus(status string, exitReason reason.Reason, wait *store.Wait) {
	action := status
	switch {
	case exitReason != "":
		action = string(exitReason)
	case wait != nil:
		action = "waiting: " + wait.Kind
	}
	e.status(status, action, exitReason, wait, "")
}

// status publishes status.json: a view of the state for watchers (ralph
// status, the monitor, the bash tool's readers).
func (e *Engine) status(status, action string, exitReason reason.Reason, wait *store.Wait, session string) {
	now := e.now()
	p := e.spec.Policy
	lim := ratelimit.New(p.Limits, e.st.Calls)
	s := store.Status{
		Timestamp: now, LoopCount: e.st.Loop, CallsMadeThisHour: lim.CallsInWindow(now),
		MaxCallsPerHour: p.Limits.MaxCallsPerHour, TokensUsedThisHour: lim.TokensInWindow(now),
		MaxTokensPerHour: p.Limits.MaxTokensPerHour, LastAction: action, Status: status,
		ExitReason: string(exitReason), StartedAt: e.st.Run.StartedAt, AgentSessionID: session, Agent: e.st.Agent,
		Breaker: store.BreakerStatus{State: string(e.st.Breaker.Status), Reason: e.st.Breaker.Message},
		Wait:    wait,
		Totals: store.Totals{InputTokens: e.st.Usage.InputTokens, OutputTokens: e.st.Usage.OutputTokens,
			CacheReadInputTokens: e.st.Usage.CacheReadInputTokens, CacheCreationInputTokens: e.st.Usage.CacheCreationInputTokens,
			CostUSD: e.st.CostUSD},
		LastAnalysis: e.st.Last.Summary, LastConfidenceScore: e.st.Last.Confidence,
		Verified: e.st.Verify.Verified,
	}
	if ok, _ := lim.Allow(now); !ok {
		s.NextReset = lim.NextFree(now).UTC().Format(time.RFC3339)
	}
	switch {
	case exitReason == reason.NeedsClarification:
		s.ClarificationQuestions = e.st.Last.Questions
	case wait != nil && wait.Kind == loop.WaitAnswer:
		s.ClarificationQuestions = e.st.Ask.Questions
	}
	if err := e.deps.Store.WriteStatus(s); err != nil && scarce.Of(err) == "" {
		// A full disk is shown by the wait it causes, not by a warning at
		// every status write while it lasts.
		e.emit(loop.Event{Type: loop.EventWarning, Message: "write status.json: " + err.Error()})
	}
}
