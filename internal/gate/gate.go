// Package gate is ralph's human gate inside an agent call: an MCP server
// (the official Go SDK) with two tools, ask and approve, that each agent
// call reaches over a unix socket in its own private call directory
// (agent.CallDirEnv). The agent's CLI starts `ralph mcp-bridge` as a stdio
// MCP server; the bridge only pipes its stdin and stdout to that socket, so
// the tools run in the ralph that owns the call, where a person can be
// asked. A unix socket works with the sandbox's network off, and the call
// directory is bound into the sandbox for that call alone.
package gate

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"ralph/internal/agent"
)

// Names the agent sees: its CLI prefixes a tool with mcp__<server>__.
const (
	ServerName  = "ralph"
	ToolAsk     = "ask"
	ToolApprove = "approve"
)

// AskTool and ApproveTool are the tools' names as Claude Code spells them
// in --allowedTools and --permission-prompt-tool.
const (
	AskTool     = "mcp__" + ServerName + "__" + ToolAsk
	ApproveTool = "mcp__" + ServerName + "__" + ToolApprove
)

// SocketName is the socket's file name in the call directory; SecretEnv
// carries the call's secret to the bridge, which sends it first.
const (
	SocketName = "gate.sock"
	SecretEnv  = "RALPH_GATE_SECRET"
)

// DefaultTimeout bounds a wait for a person (APPROVAL_TIMEOUT).
const DefaultTimeout = 30 * time.Minute

// DefaultProgressEvery is how often a waiting tool sends a progress
// notification, well inside the CLI's 30 minutes of tolerated silence.
const DefaultProgressEvery = time.Minute

// NoAnswer is the ask tool's result when nobody answered in time: the
// question then waits as a status block's question does, across calls.
const NoAnswer = "no answer yet: finish this call with NEEDS_CLARIFICATION and ask the question in your status block"

// Question is what the agent asks.
type Question struct {
	Text    string   `json:"question"`
	Options []string `json:"options,omitempty"`
	// Session is the agent session the asking call runs in, when its CLI
	// said (AgentSessionEnv).
	Session string `json:"-"`
}

// Approval is a tool call outside the allow-list, as Claude Code's
// permission prompt tool receives it.
type Approval struct {
	Tool      string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Session is the agent session the call runs in, when its CLI said
	// (AgentSessionEnv): a restart that ends the call resumes it.
	Session string `json:"-"`
}

// Decision answers an Approval.
type Decision struct {
	Allow   bool
	Message string // why, for a denial; the agent reads it
}

// ErrNobody is what a Responder returns when no person can be reached;
// the gate then behaves as if it were not there (a refused tool is
// refused, a question is left to the status block).
var ErrNobody = errors.New("gate: nobody to answer")

// Responder reaches the person: a daemon's task, a terminal. Both methods
// block until an answer, ctx's end (the call ended, or the gate's timeout)
// or ErrNobody.
type Responder interface {
	Ask(ctx context.Context, q Question) (string, error)
	Approve(ctx context.Context, a Approval) (Decision, error)
}

// Gate is the gate of one agent's calls: Open serves one call directory at
// a time; the wait clock (Waited) runs while a tool waits for a person, so
// that the call's own time limit can leave that time out.
type Gate struct {
	// Responder answers; required.
	Responder Responder
	// Bridge is the executable the agent's CLI starts as the stdio MCP
	// server (ralph itself, run as `mcp-bridge`).
	Bridge string
	// Timeout bounds each wait for a person; 0 means DefaultTimeout.
	Timeout time.Duration
	// ProgressEvery is how often a waiting tool tells the CLI it is alive;
	// 0 means DefaultProgressEvery.
	ProgressEvery time.Duration
	// AskOnly offers the ask tool alone: approve is not made the agent's
	// permission prompt, and a tool outside the allow-list is refused as
	// without a gate (for a host that cannot take decisions yet).
	AskOnly bool

	mu      sync.Mutex
	waiting int
	since   time.Time
	waited  time.Duration
}

func (g *Gate) timeout() time.Duration {
	if g.Timeout > 0 {
		return g.Timeout
	}
	return DefaultTimeout
}

// Waited is the time spent so far waiting for a person, a wait still under
// way included. Overlapping waits count once.
func (g *Gate) Waited() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waiting > 0 {
		return g.waited + time.Since(g.since)
	}
	return g.waited
}

// wait marks the start of a wait for a person; the returned func its end.
func (g *Gate) wait() func() {
	g.mu.Lock()
	if g.waiting == 0 {
		g.since = time.Now()
	}
	g.waiting++
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.waiting--
		if g.waiting == 0 {
			g.waited += time.Since(g.since)
		}
		g.mu.Unlock()
	}
}

// toolTimeoutMargin is how much longer than a wait for a person the
// agent's CLI lets one of the gate's tool calls run: the gate's own
// deadline comes first, with a message the agent can act on.
const toolTimeoutMargin = 5 * time.Minute

// StdioServer is how an agent's CLI starts the gate's MCP server: Command
// with Args, given the variables named in Env from the call's environment
// (a CLI that starts its servers with a pared-down environment must pass
// these on), and ToolTimeout, the limit to set on each of its tool calls.
type StdioServer struct {
	Command     string
	Args        []string
	Env         []string
	ToolTimeout time.Duration
}

// Stdio is the gate's MCP server for a call's configuration. Its tool
// timeout is longer than a wait for a person: the gate's own deadline
// comes first, with a message the agent can act on.
func (g *Gate) Stdio() StdioServer {
	return StdioServer{Command: g.Bridge, Args: []string{"mcp-bridge"},
		Env: []string{agent.CallDirEnv, SecretEnv}, ToolTimeout: g.timeout() + toolTimeoutMargin}
}

// MCPConfig is the --mcp-config value for a call: one stdio server, the
// bridge. It names no secret and no path of the call: the bridge finds both
// in its environment, which the CLI passes on. Its timeout (milliseconds)
// is Claude Code's per-server tool-call limit, which outranks
// MCP_TOOL_TIMEOUT (docs/agents.md: a user's lower MCP_TOOL_TIMEOUT would
// otherwise cut a person's wait short).
func (g *Gate) MCPConfig() string {
	cfg := map[string]any{"mcpServers": map[string]any{
		ServerName: map[string]any{"type": "stdio", "command": g.Bridge, "args": g.Stdio().Args,
			"timeout": g.Stdio().ToolTimeout.Milliseconds()},
	}}
	b, _ := json.Marshal(cfg)
	return string(b)
}

// PermissionPrompt reports whether approve is the call's permission prompt.
func (g *Gate) PermissionPrompt() bool { return !g.AskOnly }

// permissionResult is the permission prompt tool's answer, in the form
// Claude Code reads (checked against 2.1.329): allow with the input to run
// (unchanged), or deny with a message the model sees.
func permissionResult(a Approval, d Decision) string {
	var v any
	if d.Allow {
		input := a.Input
		if len(input) == 0 || string(input) == "null" {
			input = json.RawMessage("{}")
		}
		v = struct {
			Behavior     string          `json:"behavior"`
			UpdatedInput json.RawMessage `json:"updatedInput"`
		}{"allow", input}
	} else {
		msg := strings.TrimSpace(d.Message)
		if msg == "" {
			msg = "denied by the person running ralph"
		}
		v = struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message"`
		}{"deny", msg}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
