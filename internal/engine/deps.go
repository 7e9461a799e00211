package engine

import (
	"context"
	"time"

	"ralph/internal/agent"
	"ralph/internal/gitx"
	"ralph/internal/loop"
	"ralph/internal/store"
)

// What a host gives an engine: its effects (the clock, the store, the
// agents, git) and its answers (admission, sessions).

// Sessions hears of each change of the agent session, which lives in
// loop.State (the core decides which session a call resumes): `ralph run`
// keeps the history people read (.ralph_session_history) and the bash
// tool's .claude_session_id. nil: nobody listens.
type Sessions interface {
	Changed(c SessionChange) error
}

// SessionChange is a change of the agent session: a reset (Why says why,
// To is empty) or a new conversation (Why is "").
type SessionChange struct {
	From, To loop.AgentSession
	Why      string
	Loop     int
	At       time.Time
}

// Store is where a loop keeps its state and finds its project: the .ralph/
// directory (*store.Store) is one implementation; the daemon keeps state
// elsewhere.
type Store interface {
	ProjectDir() string
	EnsureDirs() error
	RequiredFiles() ([]string, error)
	PromptFile() string
	FixPlanFile() string
	ClarificationFile() string
	IterationLogs(n int, start time.Time) (stdout, stderr string)
	PruneIterationLogs(keep int) ([]string, error)
	// LoadState returns the saved state (found false for a new loop) and
	// what had to be recovered on the way.
	LoadState() (st loop.State, found bool, warnings []string, err error)
	// SaveState saves st and, when rec is set, the record of the
	// iteration that produced it, so that a kill never separates them.
	SaveState(st loop.State, rec *loop.Metrics) error
	// WriteStatus publishes what the loop is doing for watchers.
	WriteStatus(store.Status) error
}

// Deps are the engine's effects.
type Deps struct {
	// Agents are the adapters of Spec.Agents, in the same order.
	Agents   []agent.Adapter
	Store    Store
	Sessions Sessions
	Now      func() time.Time
	// Sleep waits d or until ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
	// Progress measures what changed during a call.
	Snapshot      func(ctx context.Context, dir string) (gitx.Snap, error)
	SnapshotAfter func(ctx context.Context, dir string, before gitx.Snap) (gitx.Snap, error)
	Backup        func(ctx context.Context, dir, label string) (string, error)
	// Emit receives every event. It must not block: hand it an
	// events.Bus's Publish when observers may be slow.
	Emit func(loop.Event)
	// Control carries pause, stop and breaker-reset requests; nil: none.
	Control Controller
	// Trace receives every decision with its inputs (nil: not traced).
	Trace func(loop.Trace)
	// SharedLimits returns the usage limits other loops of the host saw
	// (nil: none are shared, as in `ralph run`).
	SharedLimits func() map[string]loop.AgentLimit
	// Quota returns the agents the host has quota on for this loop on
	// another of their accounts (nil: accounts are not the host's
	// concern): loop.Observation.Quota.
	Quota func() map[string]bool
	// AccountEnv adds to each call of agent the environment of the
	// account it runs under (nil: the host's own login), asked right
	// before the call starts. switched, when set, says the account is not
	// the last call's: the agent's session lives in the other account's
	// config, so the call starts a new one.
	AccountEnv func(agent string) (env []string, switched string)
	// AgentStarted receives each agent call's process group id (nil: not
	// needed): a daemon records it to end the group after its own crash.
	AgentStarted func(pgid int)
	// Verify runs the project's verify command (VERIFY_CMD) on a claimed
	// completion; it is required when Policy.Verify is on.
	Verify func(ctx context.Context) loop.VerifyRun
	// Gate lets each agent call ask a person inside the call (package
	// gate): a host where a person can answer sets it; nil: nobody.
	Gate agent.Gate
	// Decisions takes the people's decisions on the gate's tool calls made
	// since it was last asked (nil: none are kept): each call's go into its
	// iteration's receipt.
	Decisions func() []loop.GateDecision
	// CallEnv adds to each agent call's environment, asked right after
	// the call's iteration_start event (nil: nothing): the trace context
	// of the call's span.
	CallEnv func() []string
	// Admit is asked right before each agent call starts, after every
	// decision of the loop's own: the host's budgets (a fleet's daily
	// ones) may hold the call. nil: every call is admitted.
	Admit func() Admission
	// Turns, shared by a host's loops, bound how many do their own work
	// at once (nil: no bound).
	Turns *Turns
}

// Admission is a host's answer to Admit.
type Admission struct {
	Allow bool
	// Held: the wait's end (zero: ask again soon) and why, for people.
	Until   time.Time
	Message string
	// MaxCostUSD is what the call may spend at most (0: no bound), passed
	// to an agent that takes a spending cap.
	MaxCostUSD float64
	// Done is called once the admitted call is over and recorded.
	Done func()
}
