package metrics

import (
	"ralph/internal/breaker"
	"ralph/internal/loop"
)

// Observer counts a host's loop events: one subscriber of the host's
// event bus.
type Observer struct {
	M *Metrics
	// Remote says the agent calls and verify runs are made in another
	// process (the workers of the Temporal backend), which counts them:
	// this host counts only what it decides and records, so that summing
	// the fleet's processes counts each call once.
	Remote bool
}

// Observe counts one of session's loop events.
func (o Observer) Observe(session string, ev loop.Event) {
	switch ev.Type {
	case loop.EventIterationEnd:
		rec := ev.Iteration
		if rec == nil {
			return
		}
		o.M.iterations.WithLabelValues(session).Inc()
		o.M.iterDuration.Observe(float64(rec.DurationMS) / 1000)
		// The loop stops when its breaker is open, so a record that
		// leaves it open is the one that opened it.
		if rec.Breaker == string(breaker.Open) {
			o.M.breakerOpens.Inc()
		}
		if !o.Remote {
			o.M.Call(*rec)
		}
	case loop.EventWait:
		if ev.WaitKind == loop.WaitUsageLimit {
			o.M.limitWaits.Inc()
		}
	case loop.EventVerify:
		if ev.Verify != nil && !o.Remote {
			o.M.Verify(*ev.Verify)
		}
	}
}

// Call counts one agent call from its iteration's record: the call, its
// tokens and its cost.
func (m *Metrics) Call(rec loop.Metrics) {
	agent, model := rec.Agent, ModelLabel(rec.Model)
	m.calls.WithLabelValues(agent, Outcome(rec)).Inc()
	for _, t := range []struct {
		kind string
		n    int64
	}{
		{KindInput, rec.InputTokens}, {KindOutput, rec.OutputTokens},
		{KindCacheRead, rec.CacheReadTokens}, {KindCacheWrite, rec.CacheCreationTokens},
	} {
		if t.n > 0 {
			m.tokens.WithLabelValues(agent, model, t.kind).Add(float64(t.n))
		}
	}
	if rec.CostUSD > 0 {
		m.cost.WithLabelValues(agent, model).Add(rec.CostUSD)
	}
}

// Verify counts one run of the verify command.
func (m *Metrics) Verify(run loop.VerifyRun) { m.verifyRuns.WithLabelValues(VerifyResult(run)).Inc() }

// Outcome is an agent call's outcome label: usage_limit, timeout, failed
// or ok.
func Outcome(rec loop.Metrics) string {
	switch {
	case rec.UsageLimit:
		return "usage_limit"
	case rec.TimedOut:
		return "timeout"
	case rec.Failed:
		return "failed"
	}
	return "ok"
}

// ModelLabel is the model label of a call that asked for model: "default"
// when it named none and the agent chose.
func ModelLabel(model string) string {
	if model == "" {
		return "default"
	}
	return model
}

// VerifyResult is a verify run's result label: passed, failed, timeout,
// or error (the command could not start).
func VerifyResult(run loop.VerifyRun) string {
	switch {
	case run.StartErr != "":
		return "error"
	case run.TimedOut:
		return "timeout"
	case run.ExitCode == 0:
		return "passed"
	}
	return "failed"
}
