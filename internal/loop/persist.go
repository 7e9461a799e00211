package loop

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/ratelimit"
	"ralph/internal/store"
)

// LoopStateName is the file the loop's own counters live in, next to the
// breaker's and the rate limiter's.
const LoopStateName = ".loop_state"

func (e *Engine) loopStateFile() string {
	return filepath.Join(e.deps.Store.RalphDir(), LoopStateName)
}

// loadState reads the persisted state; a corrupt file is reported, moved
// aside and replaced by a fresh state, never trusted.
func (e *Engine) loadState(now time.Time) error {
	if err := e.deps.Store.EnsureDirs(); err != nil {
		return err
	}
	var st State
	e.readState(e.loopStateFile(), &st, func() error { return nil })
	var b breaker.State
	if !e.readState(e.deps.Store.BreakerFile(), &b, func() error { return b.Validate() }) {
		b = breaker.New(now)
	}
	var d breaker.Decision
	b, d = b.OnStart(now, e.set.Policy.Breaker)
	if d.Changed() {
		e.emit(Event{Type: EventWarning, Message: fmt.Sprintf("circuit breaker %s → %s: %s", d.From, d.To, d.Message)})
	}
	st.Breaker = b
	var calls ratelimit.State
	if !e.readState(e.deps.Store.RateLimitFile(), &calls, func() error { return calls.Validate() }) {
		calls = ratelimit.State{}
	}
	lim := ratelimit.New(e.set.Policy.Limits, calls)
	lim.Prune(now)
	st.Calls = lim.State()
	st.StartedAt = now
	e.st = st
	e.firstLoop = st.Loop
	e.firstCost = st.CostUSD
	return e.saveState()
}

// readState reads one JSON state file into v and validates it. It reports
// false when the file is missing or had to be set aside.
func (e *Engine) readState(path string, v any, validate func() error) bool {
	err := store.ReadJSON(path, v)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err == nil {
		if verr := validate(); verr != nil {
			err = fmt.Errorf("%s: %w", path, verr)
		}
	}
	if err == nil {
		return true
	}
	moved, rerr := store.Recover(path)
	msg := fmt.Sprintf("state file is corrupt, starting it afresh: %v", err)
	if rerr == nil {
		msg += " (kept as " + filepath.Base(moved) + ")"
	}
	e.emit(Event{Type: EventWarning, Message: msg})
	return false
}

func (e *Engine) saveState() error {
	st := e.deps.Store
	if err := store.WriteJSON(e.loopStateFile(), e.st); err != nil {
		return fmt.Errorf("save loop state: %w", err)
	}
	if err := store.WriteJSON(st.BreakerFile(), e.st.Breaker); err != nil {
		return fmt.Errorf("save circuit breaker: %w", err)
	}
	if err := store.WriteJSON(st.RateLimitFile(), e.st.Calls); err != nil {
		return fmt.Errorf("save rate limit state: %w", err)
	}
	return nil
}

func (e *Engine) writeStatusAction(status, action, session string) {
	e.status(status, action, "", nil, session)
}

func (e *Engine) writeStatus(status, exitReason string, wait *store.Wait) {
	action := status
	switch {
	case exitReason != "":
		action = exitReason
	case wait != nil:
		action = "waiting: " + wait.Kind
	}
	e.status(status, action, exitReason, wait, "")
}

func (e *Engine) status(status, action, exitReason string, wait *store.Wait, session string) {
	now := e.deps.Now()
	lim := ratelimit.New(e.set.Policy.Limits, e.st.Calls)
	s := store.Status{
		Timestamp: now, LoopCount: e.st.Loop, CallsMadeThisHour: lim.CallsInWindow(now),
		MaxCallsPerHour: e.set.Policy.Limits.MaxCallsPerHour, TokensUsedThisHour: lim.TokensInWindow(now),
		MaxTokensPerHour: e.set.Policy.Limits.MaxTokensPerHour, LastAction: action, Status: status,
		ExitReason: exitReason, StartedAt: e.started, PID: os.Getpid(), AgentSessionID: session, Agent: e.agentName(),
		Breaker: store.BreakerStatus{State: string(e.st.Breaker.Status), Reason: e.st.Breaker.Message},
		Wait:    wait,
		Totals: store.Totals{InputTokens: e.st.Usage.InputTokens, OutputTokens: e.st.Usage.OutputTokens,
			CacheReadInputTokens: e.st.Usage.CacheReadInputTokens, CacheCreationInputTokens: e.st.Usage.CacheCreationInputTokens,
			CostUSD: e.st.CostUSD},
	}
	if ok, _ := lim.Allow(now); !ok {
		s.NextReset = lim.NextFree(now).UTC().Format(time.RFC3339)
	}
	if a := e.lastAnalysis; a != nil {
		s.LastAnalysis = a.Summary
		if exitReason == "needs_clarification" {
			s.ClarificationQuestions = a.ClarificationQuestions
		}
	}
	if err := store.WriteStatus(e.deps.Store.StatusFile(), s); err != nil {
		e.emit(Event{Type: EventWarning, Message: "write status.json: " + err.Error()})
	}
}
