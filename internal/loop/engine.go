package loop

import (
	"context"
	"fmt"
	"time"

	"ralph/internal/agent"
	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/gitx"
	"ralph/internal/plan"
	"ralph/internal/ratelimit"
	"ralph/internal/stop"
	"ralph/internal/store"
)

// Sessions keeps the agent's session between calls.
type Sessions interface {
	// Current is the session to resume, "" for a fresh one.
	Current(now time.Time) string
	// Save records the session the agent reported.
	Save(id string, now time.Time) error
	// Reset forgets the session, saying why.
	Reset(reason string, loop int, now time.Time) error
}

// Settings are the run's resolved options.
type Settings struct {
	Model, Effort, OutputFormat string
	Live                        bool
	OnLive                      func(agent.LiveEvent)
	AllowedTools                []string
	Timeout                     time.Duration
	Env                         []string
	Continuity                  bool
	Delay                       time.Duration
	FailureBackoff              time.Duration // first pause after a failed call; doubles; 0 = off
	FailureBackoffCap           time.Duration
	Budget                      stop.Budget
	Plan                        plan.Options
	Policy                      Policy
	Backup                      bool
	KeepIterationLogs           int
	AgentName                   string
}

// Deps are the engine's effects, injected so tests run without real time,
// processes or git.
type Deps struct {
	Agent    agent.Adapter
	Store    *store.Store
	Sessions Sessions
	Now      func() time.Time
	// Sleep waits d or until ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
	// Progress measures what changed during a call.
	Snapshot      func(ctx context.Context, dir string) (gitx.Snap, error)
	SnapshotAfter func(ctx context.Context, dir string, before gitx.Snap) (gitx.Snap, error)
	Backup        func(ctx context.Context, dir, label string) (string, error)
	// Emit receives every event; observers must not block.
	Emit func(Event)
	// Fallbacks take over, in order, while Agent is held by a usage limit.
	Fallbacks []AgentSpec
	// Control carries pause and stop requests; nil: none are read.
	Control Controller
}

// Engine sequences the iterations: it is the only place that runs effects
// and pure decisions in order.
type Engine struct {
	set  Settings
	deps Deps
	st   State
	// backoff is the pause after the next failed call.
	backoff      time.Duration
	started      time.Time
	firstLoop    int
	firstCost    float64 // the budgets count this run's spending, not the project's history
	lastAnalysis *analyze.Analysis
	// agents are Deps.Agent then the fallbacks; cur indexes the one in use.
	agents []AgentSpec
	cur    int
}

// New builds an engine; Run starts it.
func New(set Settings, deps Deps) *Engine {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Sleep == nil {
		deps.Sleep = SleepContext
	}
	if deps.Emit == nil {
		deps.Emit = func(Event) {}
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
	if set.FailureBackoffCap <= 0 {
		set.FailureBackoffCap = 10 * time.Minute
	}
	if set.KeepIterationLogs == 0 {
		set.KeepIterationLogs = store.DefaultIterationLogKeep
	}
	agents := []AgentSpec{{Adapter: deps.Agent, Model: set.Model, Effort: set.Effort, AllowedTools: set.AllowedTools}}
	agents = append(agents, deps.Fallbacks...)
	return &Engine{set: set, deps: deps, agents: agents}
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
	Reason   string
	Message  string
	ExitCode int
	Loops    int
}

func (e *Engine) finish(reason, msg string) (Result, error) {
	r := Result{Reason: reason, Message: msg, ExitCode: ExitCode(reason), Loops: e.st.Loop}
	e.writeStatus("stopped", reason, nil)
	e.emit(Event{Type: EventStop, Reason: reason, Message: msg, ExitCode: r.ExitCode})
	return r, e.saveState()
}

// Run loops until a stop rule, a budget or ctx ends it.
func (e *Engine) Run(ctx context.Context) (Result, error) {
	now := e.deps.Now()
	e.started = now
	if err := e.loadState(now); err != nil {
		return Result{ExitCode: 1}, err
	}
	e.restoreAgent()
	if e.deps.Control != nil {
		// A stop meant for an earlier run must not end this one; a pause
		// is kept: it holds until somebody resumes.
		if err := e.deps.Control.ClearStop(); err != nil {
			e.emit(Event{Type: EventWarning, Message: "control request: " + err.Error()})
		}
	}
	e.emit(Event{Type: EventStart, Agent: e.agentName(), Message: fmt.Sprintf("starting at loop %d with %s", e.st.Loop+1, e.agentName())})
	e.announceCapabilities()
	if e.st.Breaker.Status == breaker.Open {
		return e.finish(ReasonBreakerOpen, "circuit breaker is OPEN: "+e.st.Breaker.Message+
			fmt.Sprintf(" (cooldown until %s; `ralph circuit reset` closes it)", e.st.Breaker.ResumeAt(e.set.Policy.Breaker).Format(time.RFC3339)))
	}
	for {
		if ctx.Err() != nil {
			return e.interrupted()
		}
		if res, done, err := e.obeyControl(ctx); done {
			return res, err
		}
		now = e.deps.Now()
		if missing, err := e.deps.Store.RequiredFiles(); err != nil || len(missing) > 0 {
			msg := fmt.Sprintf("required files are missing: %v", missing)
			if err != nil {
				msg = err.Error()
			}
			return e.finish(ReasonIntegrity, msg)
		}
		pl, planWarn := e.readPlan()
		if planWarn != "" {
			e.emit(Event{Type: EventWarning, Message: planWarn})
		}
		var d stop.Decision
		e.st.Stop, d = stop.BeforeCall(e.st.Stop, stopPlan(pl), stop.Usage{Loops: e.st.Loop - e.startLoop(), Elapsed: now.Sub(e.started), CostUSD: e.st.CostUSD - e.firstCost}, e.set.Budget)
		if d.Stop {
			return e.finish(string(d.Reason), d.Message)
		}
		e.st.Corrections = append(e.st.Corrections, d.Corrections...)

		lim := ratelimit.New(e.set.Policy.Limits, e.st.Calls)
		if ok, until := lim.Allow(now); !ok {
			if err := e.wait(ctx, "rate_limit", until, fmt.Sprintf("%d calls in the last hour", lim.CallsInWindow(now))); err != nil {
				return e.endWait(err)
			}
			continue
		}
		if res, waited, err := e.pickAgent(ctx, now); res != nil || err != nil {
			if res == nil {
				return Result{ExitCode: 1, Loops: e.st.Loop}, err
			}
			return *res, err
		} else if waited {
			continue
		}

		out, err := e.iterate(ctx, pl)
		if err != nil {
			return Result{ExitCode: 1, Loops: e.st.Loop}, err
		}
		if ctx.Err() != nil {
			return e.interrupted()
		}
		switch out.Action {
		case Stop:
			// Told not to wait out a usage limit, the loop still moves on
			// to a fallback agent that is free.
			if out.Reason == ReasonUsageLimit && e.holdAgent(out, e.deps.Now()) {
				continue
			}
			return e.finish(out.Reason, out.Message)
		case Wait:
			// The next pickAgent switches to a free fallback or waits.
			e.holdAgent(out, e.deps.Now())
			if err := e.saveState(); err != nil {
				return Result{ExitCode: 1, Loops: e.st.Loop}, err
			}
			continue
		}
		pause := e.set.Delay
		if out.Failed && e.set.FailureBackoff > 0 {
			if e.backoff == 0 {
				e.backoff = e.set.FailureBackoff
			}
			pause = max(pause, e.backoff)
			e.backoff = min(2*e.backoff, e.set.FailureBackoffCap)
		} else {
			e.backoff = 0
		}
		if pause > 0 {
			if err := e.wait(ctx, "delay", e.deps.Now().Add(pause), ""); err != nil {
				return e.endWait(err)
			}
		}
	}
}

// startLoop is the loop count this run started from: --max-loops counts the
// iterations of this run, not of the project's history.
func (e *Engine) startLoop() int { return e.firstLoop }

// State is the loop state, for inspection after Run.
func (e *Engine) State() State { return e.st }

func (e *Engine) interrupted() (Result, error) {
	if e.deps.Sessions != nil {
		_ = e.deps.Sessions.Reset("interrupted", e.st.Loop, e.deps.Now())
	}
	return e.finish(ReasonInterrupted, "interrupted")
}

func (e *Engine) wait(ctx context.Context, kind string, until time.Time, reason string) error {
	d := until.Sub(e.deps.Now())
	if d <= 0 {
		return nil
	}
	e.writeStatus("waiting", "", &store.Wait{Kind: kind, Until: until, Reason: reason})
	e.emit(Event{Type: EventWait, WaitKind: kind, Until: until, Message: reason})
	return e.sleep(ctx, d)
}

func (e *Engine) readPlan() (plan.Plan, string) {
	pl, err := e.set.Plan.Load(e.deps.Store.FixPlanFile())
	if err != nil {
		return plan.Plan{}, ""
	}
	if len(pl.Warnings) > 0 {
		return pl, fmt.Sprintf("fix_plan.md:%d: %s", pl.Warnings[0].Line, pl.Warnings[0].Message)
	}
	return pl, ""
}

func stopPlan(p plan.Plan) stop.Plan {
	c := p.Counts()
	sp := stop.Plan{Known: true, Total: c.Total - c.OpenOptional - countOptionalDone(p), Open: c.OpenRequired}
	if t := p.NextOpen(); t != nil {
		sp.NextOpen = t.Text
	}
	return sp
}

func countOptionalDone(p plan.Plan) int {
	n := 0
	for _, t := range p.Tasks {
		if t.Optional && t.Done {
			n++
		}
	}
	return n
}

func (e *Engine) emit(ev Event) {
	ev.At = e.deps.Now()
	if ev.Loop == 0 {
		ev.Loop = e.st.Loop
	}
	e.deps.Emit(ev)
}
