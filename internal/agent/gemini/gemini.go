// Package gemini is the Gemini CLI adapter: it builds the headless `gemini
// --prompt` command line, runs it through the agent Runner, renders its
// stream-json events live, and hands stdout and stderr to the analyzer,
// which reads Gemini's json and stream-json output itself.
package gemini

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"ralph/internal/agent"
)

// Name is the adapter's name.
const Name = "gemini"

// DefaultCommand is the executable when no command is configured.
const DefaultCommand = "gemini"

// Approval modes of `gemini --approval-mode`.
const (
	ApprovalDefault  = "default"
	ApprovalAutoEdit = "auto_edit"
	ApprovalYolo     = "yolo"
	ApprovalPlan     = "plan"
	// DefaultApprovalMode is yolo because headless Gemini drops every tool
	// that would need a confirmation: in any other mode it cannot write
	// files or run commands, so a loop would make no progress.
	DefaultApprovalMode = ApprovalYolo
)

// ApprovalModes lists the accepted approval modes.
func ApprovalModes() []string {
	return []string{ApprovalDefault, ApprovalAutoEdit, ApprovalYolo, ApprovalPlan}
}

// CheckApprovalMode reports whether mode is one Gemini accepts.
func CheckApprovalMode(mode string) error {
	if mode != "" && !slices.Contains(ApprovalModes(), mode) {
		return fmt.Errorf("gemini: unknown approval mode %q (want %s)", mode, strings.Join(ApprovalModes(), ", "))
	}
	return nil
}

// Adapter runs the Gemini CLI. Its ExtraArgs are placed before the prompt.
type Adapter struct {
	agent.Base
	// ApprovalMode is the --approval-mode; "" means DefaultApprovalMode.
	ApprovalMode string
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

// Capabilities implements agent.Adapter. Gemini reports tokens (no cost),
// its quota errors (a 429 as JSON on stderr and exit status 173), and a
// session id that --resume takes. It reports no refused tools: in yolo mode
// nothing is refused, in the others headless Gemini leaves out the tools
// that need approval, and a policy refusal is only a failed tool result.
// Its --allowed-tools (deprecated) skips confirmations rather than
// restricting, so there is no allow-list either.
func (a *Adapter) Capabilities() agent.Capabilities {
	return agent.Capabilities{
		StructuredOutput: true, TokenUsage: true, UsageLimits: true, SessionResume: true, Streaming: true,
	}
}

// Command implements agent.Adapter. The argv is
//
//	<cmd words> --output-format F --approval-mode MODE --skip-trust [-m MODEL]
//	[--resume ID] [EXTRA...] --prompt=PROMPT
//
// The prompt is joined to its flag because Gemini's option parser takes a
// separate value that starts with "-" (a checklist) for another option and
// fails; "--prompt=- [ ] task" reaches the model intact (checked with
// Gemini CLI 0.61.0). Gemini has no flag that adds to the system prompt
// (GEMINI_SYSTEM_MD replaces all of it), so the loop context is appended to
// the prompt.
//
// --skip-trust trusts the project for this call only: headless Gemini
// refuses to start in a folder it does not trust (exit 55), and a user
// pointing ralph at a project has chosen to let an agent work in it. It
// adds little to yolo mode, which already runs any command.
func (a *Adapter) Command(inv agent.Invocation) ([]string, error) {
	argv, err := a.Argv(Name, inv)
	if err != nil {
		return nil, err
	}
	format, err := agent.OutputFormat(Name, inv)
	if err != nil {
		return nil, err
	}
	mode := a.ApprovalMode
	if mode == "" {
		mode = DefaultApprovalMode
	}
	if err := CheckApprovalMode(mode); err != nil {
		return nil, err
	}
	argv = append(argv, "--output-format", format, "--approval-mode", mode, "--skip-trust")
	if inv.Model != "" {
		if err := agent.OptionValue(Name, "--model", inv.Model); err != nil {
			return nil, err
		}
		argv = append(argv, "-m", inv.Model)
	}
	if inv.SessionID != "" {
		if err := agent.OptionValue(Name, "--resume", inv.SessionID); err != nil {
			return nil, err
		}
		argv = append(argv, "--resume", inv.SessionID)
	}
	argv = append(argv, a.ExtraArgs...)
	argv = append(argv, "--prompt="+agent.PromptWithContext(inv.Prompt, inv.AppendSystemPrompt))
	if err := agent.CheckArgs(Name, argv); err != nil {
		return nil, err
	}
	return argv, nil
}

// Run implements agent.Adapter. The analysis reads stderr too: a quota
// error leaves stdout empty and prints its JSON there.
func (a *Adapter) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	return a.Base.Run(ctx, inv, a.Command, agent.Call{
		Agent: Name, Live: LiveParser,
		Hint:      "set --agent-cmd to the Gemini CLI executable, or install it: npm install -g @google/gemini-cli",
		CallFiles: gateHome(inv),
	})
}
