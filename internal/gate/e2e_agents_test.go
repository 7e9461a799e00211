package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/agenttest"
	"ralph/internal/agent/codex"
	"ralph/internal/agent/gemini"
	"ralph/internal/agent/opencode"
	"ralph/internal/fakeapi"
	"ralph/internal/gate"
	"ralph/internal/shellwords"
)

// An agent CLI other than Claude Code, run for real against the fake model
// API with the gate: how to run it and what it calls the ask tool.
type otherCLI struct {
	binary  func(testing.TB) string
	env     func(testing.TB, string) []string
	adapter func(cmd string) (agent.Adapter, error)
	model   string
	// askTool is the name the CLI gives the gate's ask tool in the model's
	// tool list.
	askTool string
	// find are the turns a model takes before it can call the tool: Codex
	// defers every MCP server's tools until its tool_search finds them.
	find []fakeapi.Turn
	// lowLimit sets, as a user might, a limit on the server's tool calls
	// of 2 s; nil where the CLI has none but the server's own.
	lowLimit func(t *testing.T, env []string) []string
}

var otherCLIs = map[string]otherCLI{
	"codex": {
		binary: agenttest.CodexBinary, env: agenttest.CodexEnv,
		adapter: func(cmd string) (agent.Adapter, error) { return codex.New(cmd) },
		askTool: "ask", // in the namespace mcp__ralph
		find:    []fakeapi.Turn{fakeapi.ToolTurn("", fakeapi.ToolSearch, map[string]any{"query": "ask the person"})},
		lowLimit: func(t *testing.T, env []string) []string {
			config := filepath.Join(envValue(env, "CODEX_HOME"), "config.toml")
			f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString("\n[mcp_servers.ralph]\ncommand = \"ralph\"\ntool_timeout_sec = 2\n"); err != nil {
				t.Fatal(err)
			}
			return env
		},
	},
	"gemini": {
		binary: agenttest.GeminiBinary, env: agenttest.GeminiEnv, model: agenttest.GeminiModel,
		adapter: func(cmd string) (agent.Adapter, error) { return gemini.New(cmd) },
		askTool: "mcp_ralph_ask",
	},
	"opencode": {
		binary: agenttest.OpencodeBinary, env: agenttest.OpencodeEnv,
		adapter: func(cmd string) (agent.Adapter, error) { return opencode.New(cmd) },
		askTool: "ralph_ask",
		lowLimit: func(t *testing.T, env []string) []string {
			return append(env, opencode.ConfigContentEnv+`={"experimental": {"mcp_timeout": 2000}}`)
		},
	},
}

// askCall runs one real call of cli whose model asks the person a question
// and then ends, repeating the tool's result; it returns the requests the
// fake model API received.
func askCall(t *testing.T, cli otherCLI, p *person, g *gate.Gate, wrap wrapFunc, setup ...func(*testing.T, []string) []string) (agent.Result, []fakeapi.Request) {
	t.Helper()
	bin := cli.binary(t)
	turns := append(slices.Clone(cli.find),
		fakeapi.ToolTurn("", cli.askTool, map[string]any{"question": "Which colour?", "options": []string{"red", "blue"}}),
		fakeapi.TextTurn("the person said: {{tool_result}}"))
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: turns}}})
	a, err := cli.adapter(shellwords.Join([]string{bin}))
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	g.Responder, g.Bridge = p, exe
	logs := t.TempDir()
	dir := t.TempDir()
	env := cli.env(t, fake.URL)
	for _, f := range setup {
		env = f(t, env)
	}
	inv := agent.Invocation{
		Dir: dir, Prompt: "go", Model: cli.model, Gate: g, Timeout: 2 * time.Minute,
		Env:        env,
		StdoutPath: filepath.Join(logs, "out"), StderrPath: filepath.Join(logs, "err"),
	}
	res, err := runWithGrace(a, inv, wrap)
	out, _ := os.ReadFile(inv.StdoutPath)
	errOut, _ := os.ReadFile(inv.StderrPath)
	if err != nil {
		t.Fatalf("run: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	if pr := fake.Problems(); len(pr) > 0 {
		t.Fatalf("fake: %v\nstdout: %s\nstderr: %s", pr, out, errOut)
	}
	reqs := fake.MessageRequests()
	if res.ExitCode != 0 || len(reqs) < 2 {
		var tools []string
		if len(reqs) > 0 {
			tools = reqs[0].Messages.ToolNames()
		}
		t.Fatalf("call %+v, %d model requests, tools offered %q\nstdout: %s\nstderr: %s", res, len(reqs), tools, out, errOut)
	}
	return res, reqs
}

type wrapFunc = func([]string, string, []string, ...string) ([]string, error)

func runWithGrace(a agent.Adapter, inv agent.Invocation, wrap wrapFunc) (agent.Result, error) {
	r := &agent.Runner{Grace: time.Second, Wrap: wrap}
	switch a := a.(type) {
	case *codex.Adapter:
		a.Runner = r
	case *gemini.Adapter:
		a.Runner = r
	case *opencode.Adapter:
		a.Runner = r
	}
	return a.Run(context.Background(), inv)
}

// The person's answer is the ask tool's result, in the same call, for
// every CLI that loads MCP servers; approve is not offered where the CLI
// has no permission prompt to make of it.
func TestGateRealOtherAgentsAsk(t *testing.T) {
	for _, name := range []string{"codex", "gemini", "opencode"} {
		t.Run(name, func(t *testing.T) {
			cli := otherCLIs[name]
			p := &person{answer: "blue"}
			_, reqs := askCall(t, cli, p, &gate.Gate{}, nil)
			asking := reqs[len(reqs)-2]
			tools := asking.Messages.ToolNames()
			if !slices.Contains(tools, cli.askTool) || slices.ContainsFunc(tools, func(s string) bool { return strings.Contains(s, gate.ToolApprove) }) {
				t.Errorf("tools offered: %q", tools)
			}
			if got := reqs[len(reqs)-1].Messages.LastToolResult(); !strings.Contains(got, "blue") {
				t.Errorf("the model received %q as the tool's result", got)
			}
			if len(p.asked) != 1 || p.asked[0].Text != "Which colour?" || strings.Join(p.asked[0].Options, ",") != "red,blue" {
				t.Errorf("asked %+v", p.asked)
			}
		})
	}
}

// A person's wait outlasts a lower limit the user set on MCP tool calls:
// the call's configuration of the gate's server carries its own, which
// outranks it (a 2 s limit, an answer after 4 s).
func TestGateRealOtherAgentsOutlastToolTimeout(t *testing.T) {
	for _, name := range []string{"codex", "opencode"} {
		t.Run(name, func(t *testing.T) {
			cli := otherCLIs[name]
			p := &person{answer: "blue", delay: 4 * time.Second}
			_, reqs := askCall(t, cli, p, &gate.Gate{}, nil, cli.lowLimit)
			if got := reqs[len(reqs)-1].Messages.LastToolResult(); !strings.Contains(got, "blue") {
				t.Errorf("the model received %q as the tool's result", got)
			}
		})
	}
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
