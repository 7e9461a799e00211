// Package command is the adapter for any executable that takes a prompt
// and prints its answer: the prompt goes to its standard input or, in arg
// mode, is its last argument, and its output is analysed like any agent
// output (plain text in the usual case).
package command

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"ralph/internal/agent"
)

// Name is the adapter's name.
const Name = "command"

// Prompt modes: how the prompt reaches the command.
const (
	PromptStdin       = "stdin"
	PromptArg         = "arg"
	DefaultPromptMode = PromptStdin
)

// CheckPromptMode reports whether mode is a prompt mode.
func CheckPromptMode(mode string) error {
	switch mode {
	case "", PromptStdin, PromptArg:
		return nil
	}
	return fmt.Errorf("command: unknown prompt mode %q (want %s or %s)", mode, PromptStdin, PromptArg)
}

// Adapter runs a command. Its Cmd holds the executable and its own
// arguments; ExtraArgs follow them, before the prompt in arg mode.
type Adapter struct {
	agent.Base
	// PromptMode is PromptStdin or PromptArg; "" means DefaultPromptMode.
	PromptMode string
}

var _ agent.Adapter = (*Adapter)(nil)

// New returns an adapter for a command string, split into words
// (shellwords.Split). There is no default command.
func New(command string) (*Adapter, error) {
	if strings.TrimSpace(command) == "" {
		return nil, errors.New("command: no command given (set --agent-cmd)")
	}
	b, err := agent.NewBase(Name, command, "")
	return &Adapter{Base: b}, err
}

// Name implements agent.Adapter.
func (a *Adapter) Name() string { return Name }

// Capabilities implements agent.Adapter: nothing is known about what the
// command reports; only its output lines can be shown as they come.
func (a *Adapter) Capabilities() agent.Capabilities {
	return agent.Capabilities{Streaming: true}
}

// Command implements agent.Adapter. The argv is the command and the extra
// arguments, then in arg mode the prompt as the last argument; in stdin
// mode the prompt is not part of it. A plain command has no system prompt,
// so the loop context is appended to the prompt. Model, effort, session
// and allowed tools mean nothing to an unknown command and are left out.
func (a *Adapter) Command(inv agent.Invocation) ([]string, error) {
	argv, err := a.Argv(Name, inv)
	if err != nil {
		return nil, err
	}
	if _, err := agent.OutputFormat(Name, agent.Invocation{OutputFormat: inv.OutputFormat}); err != nil {
		return nil, err
	}
	if err := CheckPromptMode(a.PromptMode); err != nil {
		return nil, err
	}
	argv = append(argv, a.ExtraArgs...)
	if a.PromptMode == PromptArg {
		argv = append(argv, prompt(inv))
	}
	if err := agent.CheckArgs(Name, argv); err != nil {
		return nil, err
	}
	return argv, nil
}

func prompt(inv agent.Invocation) string {
	return agent.PromptWithContext(inv.Prompt, inv.AppendSystemPrompt)
}

// Run implements agent.Adapter. In stdin mode the prompt is written to the
// command's standard input, which is then closed: a command that reads to
// EOF gets the whole prompt and ends its input there.
func (a *Adapter) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	c := agent.Call{Agent: Name, Live: LiveParser, Hint: "check the command given with --agent-cmd"}
	if a.PromptMode != PromptArg {
		c.Stdin = strings.NewReader(prompt(inv))
	}
	return a.Base.Run(ctx, inv, a.Command, c)
}

// LiveParser shows every output line as it comes; dir is not needed, as
// plain lines name no tool targets.
func LiveParser(dir string, emit func(agent.LiveEvent)) func(line []byte) {
	return agent.LiveLines(emit)
}
