// Package opencode is the OpenCode adapter: it builds the `opencode run`
// command line, runs it through the agent Runner, renders its JSON events
// live, and analyses them with Normalize, because the analyzer does not
// read OpenCode's event format itself.
package opencode

import (
	"context"
	"slices"
	"strings"
	"time"

	"ralph/internal/agent"
)

// Name is the adapter's name.
const Name = "opencode"

// DefaultCommand is the executable when no command is configured (npm
// package opencode-ai).
const DefaultCommand = "opencode"

// Adapter runs OpenCode. Its ExtraArgs go to `opencode run` (--agent,
// --auto, ...), before the prompt.
type Adapter struct {
	agent.Base
	// LimitQuiet is how long OpenCode may stay silent after a rate-limit
	// error before the call is stopped as a usage limit (DefaultLimitQuiet
	// when 0).
	LimitQuiet time.Duration
}

var _ agent.Adapter = (*Adapter)(nil)

// New returns an adapter for a command string (shellwords.Split); ""
// means DefaultCommand.
func New(command string) (*Adapter, error) {
	b, err := agent.NewBase(Name, command, DefaultCommand)
	return &Adapter{Base: b}, err
}

// Name implements agent.Adapter.
func (a *Adapter) Name() string { return Name }

// Capabilities implements agent.Adapter. OpenCode reports tokens and cost
// per step, its session id, and tool calls it refused: `opencode run`
// rejects every permission request (unless --auto) and the tool fails with
// a rejection Normalize reads. Its provider errors arrive after its own
// retries; a 429 is read as a usage limit, with the provider's retry-after
// as the reset time when it sent one. A 429 it waits out in silence is
// caught in its log and stopped (limitWatch), without a reset time unless
// the provider's message names one. Permissions live in its own
// configuration, so there is no allow-list per call.
func (a *Adapter) Capabilities() agent.Capabilities {
	return agent.Capabilities{
		StructuredOutput: true, TokenUsage: true, PermissionDenials: true, UsageLimits: true,
		SessionResume: true, Streaming: true,
	}
}

// Command implements agent.Adapter. The argv is
//
//	<cmd words> run [--format json] --print-logs --log-level INFO
//	[-m PROVIDER/MODEL] [--variant EFFORT] [--session ID] [EXTRA...] -- PROMPT
//
// The log goes to stderr, stdout keeps only the events: it is the one
// place a provider's rate limit shows while OpenCode waits it out (see
// limitWatch). INFO, OpenCode's default, has the request lines that tell a
// retry from a wait; the user's own --log-level or --print-logs wins.
// `run` joins every word after "--" into the message, so "--" keeps a
// prompt that starts with "-" from being read as an option. Text output
// keeps the default format, which prints only the answer when stdout is
// not a terminal. The effort becomes --variant, OpenCode's
// provider-specific reasoning effort. OpenCode has no flag that adds to
// the system prompt, so the loop context is appended to the prompt.
func (a *Adapter) Command(inv agent.Invocation) ([]string, error) {
	argv, err := a.Argv(Name, inv)
	if err != nil {
		return nil, err
	}
	format, err := agent.OutputFormat(Name, agent.Invocation{OutputFormat: inv.OutputFormat})
	if err != nil {
		return nil, err
	}
	argv = append(argv, "run")
	if format != agent.FormatText {
		argv = append(argv, "--format", "json")
	}
	if !hasFlag(a.ExtraArgs, "--print-logs") {
		argv = append(argv, "--print-logs")
	}
	if !hasFlag(a.ExtraArgs, "--log-level") {
		argv = append(argv, "--log-level", "INFO")
	}
	for _, f := range []struct{ flag, value string }{{"-m", inv.Model}, {"--variant", inv.Effort}, {"--session", inv.SessionID}} {
		if f.value == "" {
			continue
		}
		if err := agent.OptionValue(Name, f.flag, f.value); err != nil {
			return nil, err
		}
		argv = append(argv, f.flag, f.value)
	}
	argv = append(argv, a.ExtraArgs...)
	argv = append(argv, "--", agent.PromptWithContext(inv.Prompt, inv.AppendSystemPrompt))
	if err := agent.CheckArgs(Name, argv); err != nil {
		return nil, err
	}
	return argv, nil
}

// Run implements agent.Adapter.
func (a *Adapter) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	runner := a.Runner
	if runner == nil {
		runner = &agent.Runner{}
	}
	genv, err := gateEnv(inv)
	if err != nil {
		return agent.NotRun(inv), err
	}
	inv.Env = append(slices.Clip(inv.Env), genv...)
	return a.Base.Run(ctx, inv, a.Command, agent.Call{
		Agent: Name, Live: LiveParser,
		Runner:  watchedRunner{inner: runner, w: newLimitWatch(a.LimitQuiet)},
		Hint:    "set --agent-cmd to the OpenCode executable, or install it: npm install -g opencode-ai",
		Analyze: Normalize,
	})
}

// hasFlag reports whether args set flag, alone or as flag=value.
func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}
