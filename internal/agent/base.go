package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// Base is what every adapter holds and does the same way: the executable,
// the process runner, the clock of the analysis and the user's extra
// arguments; the start of every command line and every Run. An adapter
// embeds it and adds its own flags, options and reading of the output.
type Base struct {
	// Cmd are the words of the executable, e.g. ["npx",
	// "@anthropic-ai/claude-code"].
	Cmd []string
	// Runner runs the process; nil means a zero Runner.
	Runner ProcessRunner
	// Now anchors reset times in the analysis ("resets 9pm"); nil means
	// time.Now.
	Now func() time.Time
	// ExtraArgs are the user's own arguments; each adapter places them
	// where its CLI's parser cannot mistake them for the prompt.
	ExtraArgs []string
}

// NewBase returns the base of adapter name for a configured command
// string (CommandWords); a blank one means def.
func NewBase(name, command, def string) (Base, error) {
	words, err := CommandWords(name, command, def)
	return Base{Cmd: words, Runner: &Runner{}, Now: time.Now}, err
}

// Argv starts the command line of a call: a copy of the command's words,
// after the checks every agent needs (a command to run, a prompt to give).
func (b Base) Argv(name string, inv Invocation) ([]string, error) {
	if len(b.Cmd) == 0 || b.Cmd[0] == "" {
		return nil, errors.New(name + ": no command")
	}
	if strings.TrimSpace(inv.Prompt) == "" {
		return nil, errors.New(name + ": empty prompt")
	}
	return slices.Clone(b.Cmd), nil
}

// Run is Adapter.Run for an adapter whose Command is command: c says how
// to run the process and read its output, Base fills in the command line,
// the runner (unless c brings its own) and the clock.
func (b Base) Run(ctx context.Context, inv Invocation, command func(Invocation) ([]string, error), c Call) (Result, error) {
	argv, err := command(inv)
	if err != nil {
		return NotRun(inv), err
	}
	c.Argv, c.Invocation, c.Now = argv, inv, b.Now
	if c.Runner == nil {
		c.Runner = b.Runner
	}
	return c.Run(ctx)
}
