// Package engine interprets a loop: it performs what loop.Next asks for
// (call an agent, wait, stop), measures the call at the edge (the agent's
// output, git, the plan) and feeds the result to loop.Fold. It holds no
// decision of its own. Its effects are injected (the clock, the store, the
// agents, git), so a host may run many engines in one process and tests run
// without real time or processes.
package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"ralph/internal/gitx"
	"ralph/internal/loop"
	"ralph/internal/plan"
	"ralph/internal/reason"
	"ralph/internal/scarce"
	"ralph/internal/stop"
	"ralph/internal/store"
)

// Engine runs one loop.
type Engine struct {
	spec loop.Spec
	deps Deps
	st   loop.State
	// wait is the wait in progress, so that it is announced once.
	wait *loop.Step
	// guard pins and watches the project's git while agents run
	// sandboxed (nil: not sandboxed, or not a repository).
	guard *gitx.Guard
	// nextBefore is the last call's after-snapshot, the next call's
	// before-snapshot (nil: take one).
	nextBefore *gitx.Snap
	// planWarned is the plan warning last shown.
	planWarned string
	// short counts the retries of a wait for resources in progress;
	// shortWhy is the reason last announced (scarce.go).
	short    int
	shortWhy string
	// called is what Next saw and said when it chose the call in
	// progress, for the iteration's record (loop.Replay); nil for a call
	// no Next chose (Measure).
	called *loop.Replay
	// callCap is what the next call may spend at most (0: no bound);
	// hostCap what the host allows each call Measure makes (CapCalls).
	callCap, hostCap float64
	// turn: the engine holds one of deps.Turns.
	turn bool
}

// CapCalls caps what the calls Measure makes may spend at usd, on top of
// the run's own --max-cost (0: no cap from the host): a worker passes the
// fleet's allowance on to the agent.
func (e *Engine) CapCalls(usd float64) { e.hostCap = usd }

// Carried is the snapshot the last call took after it (nil: none, or it
// failed), which the loop's next call starts from. A host that builds an
// engine per call (a worker) hands it to the next one with Continue.
func (e *Engine) Carried() *gitx.Snap { return e.nextBefore }

// Continue makes after, what Carried gave after the loop's last call, the
// before-snapshot of this engine's next call, as one engine running the
// whole loop keeps it: the caller vouches that no call ran since.
func (e *Engine) Continue(after *gitx.Snap) { e.nextBefore = after }

// New builds an engine; Run starts it.
func New(spec loop.Spec, deps Deps) *Engine {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Sleep == nil {
		deps.Sleep = SleepContext
	}
	if deps.Emit == nil {
		deps.Emit = func(loop.Event) {}
	}
	if deps.Snapshot == nil {
		deps.Snapshot = gitx.Snapshot
	}
	if deps.SnapshotAfter == nil {
		deps.SnapshotAfter = gitx.SnapshotAfter
	}
	if deps.Backup == nil {
		deps.Backup = gitx.Backup
	}
	if spec.KeepIterationLogs == 0 {
		spec.KeepIterationLogs = store.DefaultIterationLogKeep
	}
	if len(spec.Agents) == 0 {
		spec.Agents = make([]loop.AgentSpec, len(deps.Agents))
	}
	for i := range spec.Agents {
		if spec.Agents[i].Name == "" && i < len(deps.Agents) {
			spec.Agents[i].Name = deps.Agents[i].Name()
		}
	}
	spec.Policy.Agents = spec.AgentNames()
	if deps.Verify == nil {
		deps.Verify = spec.Verifier
	}
	if deps.Verify == nil {
		// A gate with nothing to run would accept no completion ever.
		spec.Policy.Verify.On = false
	}
	e := &Engine{spec: spec, deps: deps}
	e.giveWhileWaiting()
	return e
}

// SleepContext waits d or until ctx ends.
func SleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Result is how a run ended.
type Result struct {
	Reason   reason.Reason
	Message  string
	ExitCode int
	Loops    int
}

// State is the loop state, for inspection after Run.
func (e *Engine) State() loop.State { return e.st }

// Spec is the loop's specification as the engine completed it.
func (e *Engine) Spec() loop.Spec { return e.spec }

// now is the clock in UTC without a monotonic reading, so that what goes
// into the state round-trips through JSON unchanged.
func (e *Engine) now() time.Time { return e.deps.Now().UTC().Round(0) }

// Run loops until a stop rule, a budget, a request or ctx ends it.
func (e *Engine) Run(ctx context.Context) (Result, error) {
	defer e.give()
	if err := e.take(ctx); err != nil {
		return Result{Reason: reason.Interrupted, Message: "interrupted", ExitCode: reason.Interrupted.ExitCode()}, err
	}
	if err := e.start(ctx); err != nil {
		if ctx.Err() != nil {
			return Result{Reason: reason.Interrupted, Message: "interrupted", ExitCode: reason.Interrupted.ExitCode()}, err
		}
		return Result{ExitCode: 1}, err
	}
	defer e.Release()
	if err := e.protect(ctx); err != nil {
		return e.fail(err)
	}
	for {
		if ctx.Err() != nil || e.take(ctx) != nil {
			return e.finish(reason.Interrupted, "interrupted")
		}
		obs, pl := e.observe()
		var step loop.Step
		sessionBefore, before, askedBefore := e.st.Session, e.st, e.st.Ask
		e.st, step = loop.Next(e.st, obs, e.spec.Policy)
		e.trace(loop.Trace{Next: &loop.TraceNext{Observation: obs, Step: step}})
		for _, n := range step.Notes {
			e.emit(loop.Event{Type: n.Type, Agent: n.Agent, Message: n.Message})
		}
		if obs.Control.ResetID != "" && e.st.ResetID == obs.Control.ResetID {
			e.applyReset(obs.Control.ResetID)
		}
		if askedBefore.Waiting() && !e.st.Ask.Waiting() {
			e.applyAnswer(askedBefore.Loop)
		}
		switch step.Kind {
		case loop.Stop:
			return e.finish(step.Reason, step.Message)
		case loop.Check:
			d, err := e.checkClaim(ctx, loop.Decision{Kind: loop.Check, Reason: step.Reason, Message: step.Message}, nil)
			if err != nil {
				return e.fail(err)
			}
			if ctx.Err() != nil {
				return e.finish(reason.Interrupted, "interrupted")
			}
			if d.Kind == loop.Stop {
				return e.finish(d.Reason, d.Message)
			}
			continue
		case loop.Wait:
			if err := e.waitStep(ctx, step); err != nil {
				return e.finish(reason.Interrupted, "interrupted")
			}
			continue
		}
		if e.wait != nil && e.wait.WaitKind == loop.WaitPaused {
			e.emit(loop.Event{Type: loop.EventResumed, Message: "resumed"})
		}
		waited := e.wait
		e.wait = nil
		if step.ResetSession != "" {
			e.sessionReset(sessionBefore, step.ResetSession)
			if step.ResetSession == loop.SessionManual {
				e.applySessionReset()
			}
		}
		admitted, held := e.admit()
		if held != nil {
			if waited != nil && waited.WaitKind == loop.WaitBudget {
				e.wait = waited // the same wait goes on: announced once
			}
			if err := e.waitStep(ctx, *held); err != nil {
				return e.finish(reason.Interrupted, "interrupted")
			}
			continue
		}
		e.callCap = e.costCap(admitted.MaxCostUSD)
		e.called = &loop.Replay{V: loop.ReplayVersion, Policy: e.spec.Policy, Before: before, Observation: obs,
			Next: loop.StepLabel(step, e.spec.Policy)}
		d, err := e.iterate(ctx, step.Agent, pl)
		if admitted.Done != nil {
			admitted.Done()
		}
		if scarce.Of(err) != "" && ctx.Err() == nil {
			// The call could not start or log its output: nothing was
			// folded, the next pass looks at the world (a stop, a pause)
			// and makes the call again.
			if e.holdOn(ctx, err, "starting the agent") != nil {
				return e.finish(reason.Interrupted, "interrupted")
			}
			continue
		}
		if err != nil {
			return e.fail(err)
		}
		if ctx.Err() != nil {
			return e.finish(reason.Interrupted, "interrupted")
		}
		e.recovered()
		if d.Kind == loop.Stop {
			return e.finish(d.Reason, d.Message)
		}
	}
}

// admit asks the host whether the call may start: held is the wait
// when it may not.
func (e *Engine) admit() (Admission, *loop.Step) {
	if e.deps.Admit == nil {
		return Admission{Allow: true}, nil
	}
	a := e.deps.Admit()
	if a.Allow {
		return a, nil
	}
	return a, &loop.Step{Kind: loop.Wait, WaitKind: loop.WaitBudget, Until: a.Until, Message: a.Message}
}

// costCap is the least of what the host's budgets leave a call (host) and
// what the run's own --max-cost leaves (0: no bound).
func (e *Engine) costCap(host float64) float64 {
	c := host
	if b := e.spec.Policy.Budget.MaxCost; b > 0 {
		left := max(b-(e.st.CostUSD-e.st.Run.FirstCost), 0)
		if c == 0 || left < c {
			c = left
		}
	}
	return c
}

// protect pins the project's git before the first sandboxed call, when
// the repository is as the user left it: from then on a sandboxed agent
// cannot choose what ralph's own git runs (package gitx).
func (e *Engine) protect(ctx context.Context) error {
	if !e.spec.Sandboxed || e.guard != nil {
		return nil
	}
	g, err := gitx.Protect(ctx, e.deps.Store.ProjectDir())
	if err != nil {
		return fmt.Errorf("pin the project's git directories: %w", err)
	}
	e.guard = g
	return nil
}

// Release stops guarding the project's git; Run does it when it returns,
// a caller of Measure when it has run its own git after the call (a
// worker's handover).
func (e *Engine) Release() {
	e.guard.Release()
	e.guard = nil
}

// start loads the state and begins the run.
func (e *Engine) start(ctx context.Context) error {
	if err := e.retry(ctx, "", e.deps.Store.EnsureDirs); err != nil {
		return err
	}
	var st loop.State
	var warns []string
	err := e.retry(ctx, "loading the state", func() (err error) {
		st, _, warns, err = e.deps.Store.LoadState()
		return err
	})
	if err != nil {
		return err
	}
	for _, w := range warns {
		e.emit(loop.Event{Type: loop.EventWarning, Message: w})
	}
	var notes []string
	e.st, notes = loop.Begin(st, e.now(), e.spec.Policy)
	begin, policy := e.st, e.spec.Policy
	e.trace(loop.Trace{Begin: &begin, Policy: &policy})
	for _, n := range notes {
		e.emit(loop.Event{Type: loop.EventWarning, Message: n})
	}
	if e.deps.Control != nil {
		// A stop meant for an earlier run must not end this one; a pause
		// is kept: it holds until somebody resumes.
		if err := e.deps.Control.ClearStop(); err != nil {
			e.emit(loop.Event{Type: loop.EventWarning, Message: "control request: " + err.Error()})
		}
	}
	if err := e.retry(ctx, "saving the state", func() error { return e.save(nil) }); err != nil {
		return err
	}
	e.emit(loop.Event{Type: loop.EventStart, Agent: e.st.Agent, Message: fmt.Sprintf("starting at loop %d with %s", e.st.Loop+1, e.st.Agent)})
	e.announceCapabilities()
	return nil
}

// observe reads what Next needs: Look at the files, then the requests and
// the limits other loops saw, as a Temporal workflow does (Sight).
func (e *Engine) observe() (loop.Observation, plan.Plan) {
	now := e.now()
	s, pl := Look(e.deps.Store, PlanOptions(e.spec))
	if s.PlanWarning != "" && s.PlanWarning != e.planWarned {
		// Said once, not at every look during a long wait.
		e.emit(loop.Event{Type: loop.EventWarning, Message: s.PlanWarning})
	}
	e.planWarned = s.PlanWarning
	ctl := e.request()
	var shared map[string]loop.AgentLimit
	if e.deps.SharedLimits != nil {
		shared = e.deps.SharedLimits()
	}
	obs := s.Observation(now, ctl, shared)
	if e.deps.Quota != nil {
		obs.Quota = e.deps.Quota()
	}
	return obs, pl
}

// waitStep announces a wait once and sleeps through a slice of it: the
// next Next looks at the world again (a stop request, a budget, a reset).
func (e *Engine) waitStep(ctx context.Context, step loop.Step) error {
	if e.wait == nil || e.wait.WaitKind != step.WaitKind || !e.wait.Until.Equal(step.Until) {
		if step.WaitKind == loop.WaitPaused {
			if e.wait == nil || e.wait.WaitKind != loop.WaitPaused {
				e.writeStatus("paused", "", nil)
				e.emit(loop.Event{Type: loop.EventPaused, Message: step.Message})
			}
		} else {
			w := &store.Wait{Kind: step.WaitKind, Until: step.Until, Reason: step.Message}
			e.writeStatus("waiting", "", w)
			e.emit(loop.Event{Type: loop.EventWait, WaitKind: step.WaitKind, Until: step.Until, Message: step.Message})
		}
		s := step
		e.wait = &s
	}
	d := pollEvery
	if !step.Until.IsZero() {
		d = step.Until.Sub(e.now())
		if e.deps.Control != nil {
			d = min(d, pollEvery)
		}
	}
	if d <= 0 {
		return ctx.Err()
	}
	return e.deps.Sleep(ctx, d)
}

// fail ends the run on an error no decision covers (an agent that cannot
// start, a state that cannot be saved): the status says so, with the
// error, instead of "running" for a process that is gone.
func (e *Engine) fail(err error) (Result, error) {
	e.status("stopped", "error: "+err.Error(), "", nil, "")
	e.emit(loop.Event{Type: loop.EventError, Message: err.Error(), ExitCode: 1})
	return Result{ExitCode: 1, Loops: e.st.Loop}, err
}

func (e *Engine) finish(r reason.Reason, msg string) (Result, error) {
	if r == reason.Interrupted {
		if e.deps.Control != nil {
			if err := e.deps.Control.ClearStop(); err != nil {
				e.emit(loop.Event{Type: loop.EventWarning, Message: "control request: " + err.Error()})
			}
		}
		if !e.st.Ask.Waiting() {
			// No call was cut short while the loop waited for an answer:
			// the session that asked stays, for the answer to resume it.
			before := e.st.Session
			e.st = loop.ForgetSession(e.st)
			e.sessionReset(before, loop.SessionInterrupted)
		}
	}
	res := Result{Reason: r, Message: msg, ExitCode: r.ExitCode(), Loops: e.st.Loop}
	err := e.save(nil)
	e.writeStatus("stopped", r, nil)
	e.emit(loop.Event{Type: loop.EventStop, Reason: r, Message: msg, ExitCode: res.ExitCode})
	return res, err
}

// sessionReset tells the listener the state no longer holds the session
// it held before, and why (an interrupted run is told even with
// continuity off, as the history always showed it).
func (e *Engine) sessionReset(before loop.AgentSession, why string) {
	if e.spec.Policy.NoContinuity && why != loop.SessionInterrupted {
		return
	}
	e.sessionChanged(SessionChange{From: before, To: e.st.Session, Why: why, Loop: e.st.Loop, At: e.now()})
}

func (e *Engine) sessionChanged(c SessionChange) {
	if e.deps.Sessions == nil {
		return
	}
	if err := e.deps.Sessions.Changed(c); err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Loop: c.Loop, Message: "session: " + err.Error()})
	}
}

func (e *Engine) readPlan() (plan.Plan, string) {
	return readPlan(e.deps.Store, PlanOptions(e.spec))
}

func (e *Engine) emit(ev loop.Event) {
	ev.At = e.deps.Now()
	if ev.Loop == 0 {
		ev.Loop = e.st.Loop
	}
	e.deps.Emit(ev)
}

// save saves the state (and rec). A failure after the document itself was
// saved loses nothing and is reported; only a document that could not be
// saved stops the loop.
func (e *Engine) save(rec *loop.Metrics) error {
	err := e.deps.Store.SaveState(e.st, rec)
	var after *store.AfterSaveError
	if errors.As(err, &after) {
		e.emit(loop.Event{Type: loop.EventWarning, Message: after.Error()})
		return nil
	}
	return err
}

func (e *Engine) trace(t loop.Trace) {
	if e.deps.Trace != nil {
		e.deps.Trace(t)
	}
}

// announceCapabilities says once, at start, what each agent cannot report,
// so a missing signal (no permission denials from Codex, say) is a known
// limitation rather than a silent gap in the decisions.
func (e *Engine) announceCapabilities() {
	for _, a := range e.deps.Agents {
		for _, m := range a.Capabilities().Missing() {
			e.emit(loop.Event{Type: loop.EventWarning, Agent: a.Name(), Message: a.Name() + ": " + m})
		}
	}
}

func stopPlan(p plan.Plan) stop.Plan {
	c := p.Counts()
	optionalDone := 0
	for _, t := range p.Tasks {
		if t.Optional && t.Done {
			optionalDone++
		}
	}
	sp := stop.Plan{Known: true, Total: c.Total - c.OpenOptional - optionalDone, Open: c.OpenRequired}
	if t := p.NextOpen(); t != nil {
		sp.NextOpen = t.Text
	}
	return sp
}
