// Package agent is ralph's edge towards AI coding agent CLIs: the Adapter
// interface every agent (Claude Code first; Codex, Gemini, OpenCode and a
// plain command later) implements, and the Runner every agent process goes
// through.
//
// The loop engine sees only Adapter: it builds an Invocation, calls Run, and
// folds the Result (exit status plus analyze.Analysis) into its state. Tests
// of the engine swap in a fake Adapter, or run the scripted fake agent
// executable in package fakeagent through a real adapter.
package agent

import (
	"context"
	"fmt"
	"time"

	"ralph/internal/analyze"
)

// Output formats an Invocation may ask for.
const (
	FormatJSON       = "json"
	FormatStreamJSON = "stream-json"
	FormatText       = "text"
)

// Invocation is one agent call: everything an adapter needs to build the
// command line and run it.
type Invocation struct {
	// Dir is the project directory the agent works in.
	Dir string
	// Prompt is the task (PROMPT.md and friends).
	Prompt string
	// AppendSystemPrompt is ralph's loop context, appended to the agent's
	// system prompt so it does not crowd the task.
	AppendSystemPrompt string
	// SessionID resumes that agent session; "" starts a fresh one.
	SessionID string
	// OnStart, when set, receives the agent's process group id once it
	// runs (see Process.OnStart).
	OnStart func(pgid int)
	// Model and Effort are passed through when set.
	Model, Effort string
	// AllowedTools is the tool allow-list in Claude syntax ("Write",
	// "Bash(git diff *)"). Used exactly as given: an empty list adds no
	// restriction flag (defaults belong to the configuration, e.g.
	// claude.DefaultAllowedTools). Entries holding several comma-separated
	// tools are split.
	AllowedTools []string
	// OutputFormat is FormatJSON, FormatStreamJSON or FormatText; "" means
	// the adapter's structured default.
	OutputFormat string
	// Live streams the agent's output to OnEvent while it runs.
	Live bool
	// Timeout bounds the call; 0 means no limit other than the context.
	Timeout time.Duration
	// Env holds extra KEY=value entries on top of ralph's own environment.
	Env []string
	// MaxBudgetUSD caps what the call may spend, for an agent that takes
	// a cap (Claude Code's --max-budget-usd); 0: no cap. ralph enforces
	// its budgets between calls whatever the agent does with it.
	MaxBudgetUSD float64
	// Share are files outside Dir the agent works on (a daemon's task
	// file): a sandbox binds them writable, and nothing else beside them.
	Share []string
	// StdoutPath and StderrPath are the iteration's log files; both are
	// required, because the analysis streams from the stdout file. The
	// stderr log is made at the agent's first byte there: none, no file.
	StdoutPath, StderrPath string
	// OnEvent receives rendered live events (may be nil). It is called from
	// one goroutine at a time, and never after Run has returned.
	OnEvent func(LiveEvent)
	// Gate, when set, lets the agent ask a person and ask for approval
	// inside the call (package gate); nil where nobody can answer, and for
	// an agent whose adapter does not wire it.
	Gate Gate
}

// Gate is a human gate served in each call's private directory (package
// gate implements it).
type Gate interface {
	// Open serves the call directory until stop; env goes to the agent.
	Open(callDir string) (env []string, stop func(), err error)
	// Waited is the time spent waiting for a person so far: the call's
	// Timeout does not count it.
	Waited() time.Duration
}

// Result is what one agent call left behind.
type Result struct {
	// ExitCode is the process exit status; 128+N when it was killed by
	// signal N (shell convention), -1 when it never ran.
	ExitCode int
	// TimedOut is set when Invocation.Timeout expired and ralph killed the
	// agent.
	TimedOut bool
	// Interrupted is set when the context was cancelled (Ctrl-C, shutdown).
	Interrupted bool
	Duration    time.Duration
	StdoutPath  string
	StderrPath  string
	// Analysis is the analysed output; nil when the agent never started.
	Analysis *analyze.Analysis
	// StartErr is set when the executable could not be started (not found,
	// not executable, bad directory); it is an *StartError.
	StartErr error
	// OutputErr is set when the output logs could not be written in full
	// (ProcessResult.OutputErr): the analysis then read part of the call.
	OutputErr error
	// Warnings are things the user should know that did not stop the call,
	// e.g. background processes the agent left behind that ralph killed.
	Warnings []string
}

// Capabilities say which facts an agent's output can carry, so the loop
// knows which signals to trust and which features to offer.
type Capabilities struct {
	StructuredOutput  bool // machine-readable result (JSON / JSONL)
	TokenUsage        bool // reports tokens and cost
	PermissionDenials bool // reports refused tool calls
	UsageLimits       bool // reports provider usage limits with reset times
	SessionResume     bool // can continue a session by id
	ToolRestrictions  bool // accepts a tool allow-list
	Streaming         bool // can stream events while running (live view)
	// A resumed session's reports may add up the whole session rather than
	// the call: Claude Code's total_cost_usd does (its token counts do not),
	// Codex's turn usage does for tokens. The loop then counts the growth.
	CumulativeCost   bool
	CumulativeTokens bool
}

// Adapter drives one agent CLI.
type Adapter interface {
	// Name is the agent's short name ("claude").
	Name() string
	Capabilities() Capabilities
	// Command is the argv Run would execute, without running it (dry runs,
	// logs, tests).
	Command(inv Invocation) (argv []string, err error)
	// Run executes one call and analyses its output. A non-zero exit, a
	// timeout or an interrupt is reported in Result, not as an error. err is
	// non-nil when no agent output could be obtained: an invalid Invocation,
	// log files that cannot be created, or an executable that cannot start
	// (then err is Result.StartErr, an *StartError).
	Run(ctx context.Context, inv Invocation) (Result, error)
}

// StartError says the agent executable could not be started.
type StartError struct {
	// Command is the executable as configured (argv[0]).
	Command string
	Err     error
	// Hint tells the user where the command comes from, e.g. "set
	// --agent-cmd or CLAUDE_CODE_CMD".
	Hint string
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("cannot start agent command %q: %v", e.Command, e.Err)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

func (e *StartError) Unwrap() error { return e.Err }
