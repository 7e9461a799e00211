// Package codex is the OpenAI Codex CLI adapter: it builds the `codex exec`
// command line, runs it through the agent Runner, renders its JSONL events
// live, and hands the transcript to the analyzer, which reads Codex's
// `exec --json` format itself.
package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"ralph/internal/agent"
	"ralph/internal/gate"
)

// Name is the adapter's name.
const Name = "codex"

// DefaultCommand is the executable when no command is configured.
const DefaultCommand = "codex"

// Sandbox modes of `codex exec --sandbox`.
const (
	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
	SandboxFullAccess     = "danger-full-access"
	// DefaultSandbox lets the agent edit the project and run commands in
	// it, which a loop needs, without access to the rest of the machine.
	DefaultSandbox = SandboxWorkspaceWrite
)

// Sandboxes lists the accepted sandbox modes.
func Sandboxes() []string {
	return []string{SandboxReadOnly, SandboxWorkspaceWrite, SandboxFullAccess}
}

// Adapter runs Codex. Its ExtraArgs go to `codex exec`, after ralph's
// options and before a resume and the prompt.
type Adapter struct {
	agent.Base
	// Sandbox is the --sandbox mode; "" means DefaultSandbox.
	Sandbox string
	// OwnSandbox is SANDBOX_PROVIDER=agent: Codex's sandbox is the only
	// one, so full access and the flag that bypasses it are refused.
	OwnSandbox bool
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

// Capabilities implements agent.Adapter. Codex reports tokens (no cost),
// its usage limits with a reset time, and its thread id for resuming. It
// has no tool allow-list (the sandbox bounds it instead), and a command the
// sandbox refuses is just a failed command in its output, never a
// permission denial.
func (a *Adapter) Capabilities() agent.Capabilities {
	return agent.Capabilities{
		StructuredOutput: true, TokenUsage: true, UsageLimits: true, SessionResume: true, Streaming: true,
		CumulativeTokens: true,
	}
}

// CheckSandbox reports whether mode is a sandbox mode Codex accepts.
func CheckSandbox(mode string) error {
	if mode != "" && !slices.Contains(Sandboxes(), mode) {
		return fmt.Errorf("codex: unknown sandbox mode %q (want %s)", mode, strings.Join(Sandboxes(), ", "))
	}
	return nil
}

// Command implements agent.Adapter. The argv is
//
//	<cmd words> exec [--json] --skip-git-repo-check --sandbox MODE [-m MODEL]
//	[-c model_reasoning_effort="E"] [-c mcp_servers.ralph.…=… (the gate)]
//	[EXTRA...] [resume ID] -- PROMPT
//
// The options go before "resume" because `codex exec resume` accepts
// neither --sandbox nor most other exec options after it, while those given
// to exec before it still apply to the resumed thread (checked with Codex
// 0.169.0). "--" keeps a prompt that starts with "-" from being read as an
// option. Text output drops --json; everything else is the JSONL stream.
// --skip-git-repo-check lets ralph drive a project that is not (yet) a git
// repository. Run leaves stdin at the Runner's /dev/null: `codex exec`
// reads a stdin that is not a terminal and adds it to the prompt.
//
// Codex has no flag that adds to the system prompt, so the loop context is
// appended to the prompt (agent.PromptWithContext). The `-c
// developer_instructions=…` override does reach a new thread, but a resumed
// thread keeps the instructions it started with and ignores a new value,
// while ralph's context changes every iteration.
func (a *Adapter) Command(inv agent.Invocation) ([]string, error) {
	argv, err := a.Argv(Name, inv)
	if err != nil {
		return nil, err
	}
	jsonl, err := structured(inv.OutputFormat)
	if err != nil {
		return nil, err
	}
	sandbox := a.Sandbox
	if sandbox == "" {
		sandbox = DefaultSandbox
	}
	if err := CheckSandbox(sandbox); err != nil {
		return nil, err
	}
	if a.OwnSandbox {
		if sandbox == SandboxFullAccess {
			return nil, errors.New("codex: SANDBOX_PROVIDER=agent confines Codex with its own sandbox, and CODEX_SANDBOX=danger-full-access switches it off; use workspace-write")
		}
		for _, x := range a.ExtraArgs {
			if x == "--dangerously-bypass-approvals-and-sandbox" || x == "-s" || x == "--sandbox" || strings.HasPrefix(x, "--sandbox=") {
				return nil, fmt.Errorf("codex: CODEX_ARGS has %s, which would undo the sandbox of SANDBOX_PROVIDER=agent", x)
			}
		}
	}
	argv = append(argv, "exec")
	if jsonl {
		argv = append(argv, "--json")
	}
	argv = append(argv, "--skip-git-repo-check", "--sandbox", sandbox)
	if inv.Model != "" {
		if err := agent.OptionValue(Name, "--model", inv.Model); err != nil {
			return nil, err
		}
		argv = append(argv, "-m", inv.Model)
	}
	if inv.Effort != "" {
		// A bare word, so the TOML value needs no escaping and cannot carry
		// a second setting.
		if strings.Trim(strings.ToLower(inv.Effort), "abcdefghijklmnopqrstuvwxyz") != "" {
			return nil, fmt.Errorf("codex: invalid effort %q (want a word such as low, medium or high)", inv.Effort)
		}
		argv = append(argv, "-c", `model_reasoning_effort="`+strings.ToLower(inv.Effort)+`"`)
	}
	argv = append(argv, gateArgs(inv.Gate)...)
	argv = append(argv, a.ExtraArgs...)
	if inv.SessionID != "" {
		if err := agent.OptionValue(Name, "resume", inv.SessionID); err != nil {
			return nil, err
		}
		argv = append(argv, "resume", inv.SessionID)
	}
	argv = append(argv, "--", agent.PromptWithContext(inv.Prompt, inv.AppendSystemPrompt))
	if err := agent.CheckArgs(Name, argv); err != nil {
		return nil, err
	}
	return argv, nil
}

// gateArgs start the call with ralph's gate as an MCP server, given as
// -c overrides, which reach this call alone and leave the user's
// config.toml (and its own servers) as they are. Codex starts a stdio
// server with only a few variables of its environment (PATH, HOME, …):
// env_vars passes on the bridge's call directory and secret by name, so
// the secret is never on a command line. An MCP tool call needs an
// approval that `codex exec` (approval policy never) refuses unless the
// server's tools are approved up front. Its tool calls are cut after
// tool_timeout_sec (60 s unless set), shorter than a person's wait. Only
// ask is enabled: Codex has no permission prompt tool to make of approve
// (docs/agents.md). Checked with Codex 0.169.0.
func gateArgs(g agent.Gate) []string {
	s, ok := g.(interface{ Stdio() gate.StdioServer })
	if !ok || g == nil {
		return nil
	}
	srv := s.Stdio()
	key := "mcp_servers." + gate.ServerName + "."
	return []string{
		"-c", key + "command=" + tomlValue(srv.Command),
		"-c", key + "args=" + tomlValue(srv.Args),
		"-c", key + "env_vars=" + tomlValue(srv.Env),
		"-c", key + "enabled_tools=" + tomlValue([]string{gate.ToolAsk}),
		"-c", key + "default_tools_approval_mode=" + tomlValue("approve"),
		"-c", key + "tool_timeout_sec=" + strconv.FormatInt(int64(srv.ToolTimeout.Seconds()), 10),
	}
}

// tomlValue writes a string or a list of strings as TOML: a JSON string is
// a TOML basic string, and its escapes are TOML's too.
func tomlValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// structured says whether the call asks for the JSONL stream, the only
// structured output `codex exec` has: json and stream-json both mean it.
func structured(format string) (bool, error) {
	switch format {
	case "", agent.FormatJSON, agent.FormatStreamJSON:
		return true, nil
	case agent.FormatText:
		return false, nil
	}
	return false, fmt.Errorf("codex: unknown output format %q (want json, stream-json or text)", format)
}

// Run implements agent.Adapter.
func (a *Adapter) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	return a.Base.Run(ctx, inv, a.Command, agent.Call{
		Agent: Name, Live: LiveParser,
		Hint: "set --agent-cmd to the Codex executable, or install it: npm install -g @openai/codex",
	})
}
