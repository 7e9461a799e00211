// Package agents is the registry of the agent adapters ralph can drive:
// their names and default executables, one constructor for all of them,
// their live parsers, and detection of the ones installed.
package agents

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/claude"
	"ralph/internal/agent/codex"
	"ralph/internal/agent/command"
	"ralph/internal/agent/gemini"
	"ralph/internal/agent/opencode"
)

// Names lists the agents, the default first.
func Names() []string {
	return []string{claude.Name, codex.Name, gemini.Name, opencode.Name, command.Name}
}

// DefaultCommand is the executable an agent runs when no command is
// configured; "" for the plain command agent (it has none) and for an
// unknown name.
func DefaultCommand(name string) string {
	switch name {
	case claude.Name:
		return claude.DefaultCommand
	case codex.Name:
		return codex.DefaultCommand
	case gemini.Name:
		return gemini.DefaultCommand
	case opencode.Name:
		return opencode.DefaultCommand
	}
	return ""
}

// Options configure an adapter.
type Options struct {
	// Cmd are the words of the executable; empty means the agent's
	// DefaultCommand (the command agent has none and needs one).
	Cmd []string
	// ExtraArgs are the user's own arguments, placed before the prompt.
	ExtraArgs []string
	// Sandbox is Codex's --sandbox mode, ApprovalMode Gemini's
	// --approval-mode, PromptMode how the command agent gets its prompt
	// ("stdin" or "arg"); "" means the agent's default. Setting one for an
	// agent it does not apply to is an error, so that a sandbox a user
	// asked for is never silently dropped.
	Sandbox, ApprovalMode, PromptMode string
	// Now is the clock of the analysis; nil means time.Now.
	Now func() time.Time
	// Wrap confines every process of the agent (agent.Runner.Wrap); nil
	// runs it as it is.
	Wrap func(argv []string, dir string, env []string, share ...string) ([]string, error)
	// OwnSandbox switches on the agent's own sandbox (SANDBOX_PROVIDER=agent):
	// Claude Code's sandbox settings, Codex's --sandbox without full access.
	// The other agents have none: asking for it is an error.
	OwnSandbox bool
}

// New builds the adapter called name.
func New(name string, o Options) (agent.Adapter, error) {
	if err := o.check(name); err != nil {
		return nil, err
	}
	cmd := slices.Clone(o.Cmd)
	if len(cmd) == 0 {
		if def := DefaultCommand(name); def != "" {
			cmd = []string{def}
		}
	}
	if len(cmd) == 0 || cmd[0] == "" {
		return nil, fmt.Errorf("agent %s: no command given (set --agent-cmd)", name)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	runner := &agent.Runner{Wrap: o.Wrap}
	extra := slices.Clone(o.ExtraArgs)
	switch name {
	case claude.Name:
		return &claude.Adapter{Base: agent.Base{Cmd: cmd, Runner: runner, Now: now, ExtraArgs: extra}, OwnSandbox: o.OwnSandbox}, nil
	case codex.Name:
		return &codex.Adapter{Base: agent.Base{Cmd: cmd, Runner: runner, Now: now, ExtraArgs: extra}, Sandbox: o.Sandbox, OwnSandbox: o.OwnSandbox}, nil
	case gemini.Name:
		return &gemini.Adapter{Base: agent.Base{Cmd: cmd, Runner: runner, Now: now, ExtraArgs: extra}, ApprovalMode: o.ApprovalMode}, nil
	case opencode.Name:
		return &opencode.Adapter{Base: agent.Base{Cmd: cmd, Runner: runner, Now: now, ExtraArgs: extra}}, nil
	case command.Name:
		return &command.Adapter{Base: agent.Base{Cmd: cmd, Runner: runner, Now: now, ExtraArgs: extra}, PromptMode: o.PromptMode}, nil
	}
	return nil, unknown(name)
}

func (o Options) check(name string) error {
	if !slices.Contains(Names(), name) {
		return unknown(name)
	}
	var errs []error
	if o.OwnSandbox && name != claude.Name && name != codex.Name {
		errs = append(errs, fmt.Errorf("agent %s has no sandbox of its own (SANDBOX_PROVIDER=agent works with claude and codex; use bwrap on Linux)", name))
	}
	for _, opt := range []struct {
		label, value, owner string
		check               func(string) error
	}{
		{"sandbox", o.Sandbox, codex.Name, codex.CheckSandbox},
		{"approval mode", o.ApprovalMode, gemini.Name, gemini.CheckApprovalMode},
		{"prompt mode", o.PromptMode, command.Name, command.CheckPromptMode},
	} {
		switch {
		case opt.value == "":
		case name != opt.owner:
			errs = append(errs, fmt.Errorf("agent %s: a %s applies only to %s", name, opt.label, opt.owner))
		default:
			errs = append(errs, opt.check(opt.value))
		}
	}
	return errors.Join(errs...)
}

func unknown(name string) error {
	return fmt.Errorf("unknown agent %q (known: %s)", name, strings.Join(Names(), ", "))
}

// LiveParser returns the live parser of the agent called name, or nil for
// an unknown one.
func LiveParser(name, dir string, emit func(agent.LiveEvent)) func([]byte) {
	var parse agent.LiveParserFunc
	switch name {
	case claude.Name:
		parse = claude.LiveParser
	case codex.Name:
		parse = codex.LiveParser
	case gemini.Name:
		parse = gemini.LiveParser
	case opencode.Name:
		parse = opencode.LiveParser
	case command.Name:
		parse = command.LiveParser
	default:
		return nil
	}
	return parse(dir, emit)
}
