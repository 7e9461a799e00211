// Package claude is the Claude Code adapter: it builds the `claude -p`
// command line, runs it through the agent Runner, renders stream-json live,
// and analyses the output.
package claude

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"ralph/internal/agent"
	"ralph/internal/analyze"
	"ralph/internal/gate"
	"ralph/internal/sandbox"
)

// Name is the adapter's name.
const Name = "claude"

// DefaultCommand is the executable when no --agent-cmd / CLAUDE_CODE_CMD is
// set.
const DefaultCommand = "claude"

// Adapter runs Claude Code. Its ExtraArgs are placed before "-p" and the
// prompt, so they cannot end up in the prompt's position.
type Adapter struct {
	agent.Base
	// OwnSandbox runs every Bash command in Claude Code's own sandbox
	// (SANDBOX_PROVIDER=agent): its settings go on the command line with
	// --settings, which outranks the user's and the project's settings
	// files and leaves them untouched.
	OwnSandbox bool
}

var _ agent.Adapter = (*Adapter)(nil)

// New returns an adapter for a command string as given in --agent-cmd or
// CLAUDE_CODE_CMD (shellwords.Split); "" means DefaultCommand.
func New(command string) (*Adapter, error) {
	b, err := agent.NewBase(Name, command, DefaultCommand)
	return &Adapter{Base: b}, err
}

// Name implements agent.Adapter.
func (a *Adapter) Name() string { return Name }

// Capabilities implements agent.Adapter: Claude Code reports all of it.
func (a *Adapter) Capabilities() agent.Capabilities {
	return agent.Capabilities{
		StructuredOutput: true, TokenUsage: true, PermissionDenials: true, UsageLimits: true,
		SessionResume: true, ToolRestrictions: true, Streaming: true, CumulativeCost: true,
	}
}

// Command implements agent.Adapter. The argv is
//
//	<cmd words> [--model M] [--effort E] --output-format F [--verbose]
//	[--allowedTools T1 T2 ...] [--mcp-config GATE --permission-prompt-tool
//	mcp__ralph__approve] [--resume ID] [--append-system-prompt CTX]
//	[--settings SANDBOX] [EXTRA...] -p -- PROMPT
//
// --verbose comes with stream-json because `claude -p` refuses stream-json
// without it. Each allowed tool is its own argv element after one
// --allowedTools: the flag is variadic (`<tools...>`), and an element keeps
// its spaces, so "Bash(git diff *)" needs no quoting; the flags after it end
// the list. "--" before the prompt keeps a prompt that starts with "-" (a
// checklist) from being read as an option. Never --continue: a session is
// only ever resumed by its id.
func (a *Adapter) Command(inv agent.Invocation) ([]string, error) {
	argv, err := a.Argv(Name, inv)
	if err != nil {
		return nil, err
	}
	format, err := agent.OutputFormat(Name, inv)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct{ flag, value string }{{"--model", inv.Model}, {"--effort", inv.Effort}} {
		if f.value == "" {
			continue
		}
		if err := agent.OptionValue(Name, f.flag, f.value); err != nil {
			return nil, err
		}
		argv = append(argv, f.flag, f.value)
	}
	argv = append(argv, "--output-format", format)
	if inv.MaxBudgetUSD > 0 {
		// Claude Code ends the call with error_max_budget_usd once it has
		// spent this; a budget's last cent is still a cent.
		argv = append(argv, "--max-budget-usd", strconv.FormatFloat(max(math.Floor(inv.MaxBudgetUSD*100)/100, 0.01), 'f', 2, 64))
	}
	if format == agent.FormatStreamJSON {
		argv = append(argv, "--verbose")
	}
	tools, err := toolList(inv.AllowedTools)
	if err != nil {
		return nil, err
	}
	gateArgs, tools := gateArgs(inv.Gate, tools)
	if len(tools) > 0 {
		argv = append(argv, "--allowedTools")
		argv = append(argv, tools...)
	}
	// --mcp-config is variadic too: the flag after it ends its list.
	argv = append(argv, gateArgs...)
	if inv.SessionID != "" {
		if err := agent.OptionValue(Name, "--resume", inv.SessionID); err != nil {
			return nil, err
		}
		argv = append(argv, "--resume", inv.SessionID)
	}
	if inv.AppendSystemPrompt != "" {
		argv = append(argv, "--append-system-prompt", agent.LoopContext(inv.AppendSystemPrompt))
	}
	if a.OwnSandbox {
		// A second --settings would replace these: the user's own settings
		// belong in their settings files.
		if slices.ContainsFunc(a.ExtraArgs, func(s string) bool { return s == "--settings" || strings.HasPrefix(s, "--settings=") }) {
			return nil, errors.New("claude: CLAUDE_ARGS has --settings, which would replace the sandbox settings of SANDBOX_PROVIDER=agent; put your settings in a settings file")
		}
		argv = append(argv, "--settings", sandbox.ClaudeSandboxSettings)
	}
	argv = append(argv, a.ExtraArgs...)
	argv = append(argv, "-p", "--", inv.Prompt)
	if err := agent.CheckArgs(Name, argv); err != nil {
		return nil, err
	}
	return argv, nil
}

// mcpGate is a gate that can name its MCP server (gate.Gate).
type mcpGate interface {
	MCPConfig() string
	PermissionPrompt() bool
}

// gateArgs start the call with ralph's gate as an MCP server: its approve
// tool becomes the permission prompt (a tool outside the allow-list asks a
// person instead of being refused), and its ask tool is allowed, or asking
// would itself need an approval. Without a gate, nothing changes.
func gateArgs(g agent.Gate, tools []string) (args, allowed []string) {
	mg, ok := g.(mcpGate)
	if !ok || g == nil {
		return nil, tools
	}
	if !slices.Contains(tools, gate.AskTool) {
		tools = append(tools, gate.AskTool)
	}
	args = []string{"--mcp-config", mg.MCPConfig()}
	if mg.PermissionPrompt() {
		args = append(args, "--permission-prompt-tool", gate.ApproveTool)
	}
	return args, tools
}

// toolList flattens the allow-list to one tool per element: entries may
// hold several tools ("Write,Read" from .ralphrc), and the analyzer wants
// them apart too.
func toolList(in []string) ([]string, error) {
	var out []string
	for _, e := range in {
		for _, t := range analyze.SplitToolList(e) {
			if strings.HasPrefix(t, "-") || strings.ContainsRune(t, '\x00') {
				return nil, fmt.Errorf("claude: invalid allowed tool %q", t)
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// Run implements agent.Adapter.
func (a *Adapter) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	tools, _ := toolList(inv.AllowedTools) // validated by Command
	return a.Base.Run(ctx, inv, a.Command, agent.Call{
		Agent: Name, Live: LiveParser,
		Hint:    "set --agent-cmd or CLAUDE_CODE_CMD to the Claude Code executable, or install it: npm install -g @anthropic-ai/claude-code",
		Options: analyze.Options{AllowedTools: tools},
	})
}
