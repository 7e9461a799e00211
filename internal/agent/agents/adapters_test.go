package agents

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/agent"
)

// adapter builds agent name with a command that does not exist, so that a
// call that got as far as starting it fails with a StartError.
func adapter(t *testing.T, name string) agent.Adapter {
	t.Helper()
	a, err := New(name, Options{Cmd: []string{"ralph-no-such-" + name}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func invocation(t *testing.T) agent.Invocation {
	dir := t.TempDir()
	return agent.Invocation{Dir: dir, Prompt: "Write hello.txt", AppendSystemPrompt: "[ralph loop 1]",
		StdoutPath: filepath.Join(dir, "out.log"), StderrPath: filepath.Join(dir, "err.log")}
}

// Every agent refuses a command line it cannot build honestly: no prompt,
// a format it does not know, a flag value its CLI would read as another
// option, an argument the kernel would refuse.
func TestCommandRefusals(t *testing.T) {
	huge := strings.Repeat("x", 200<<10)
	type refusal struct {
		name string
		inv  agent.Invocation
		want string
	}
	common := []refusal{
		{"empty prompt", agent.Invocation{Prompt: " \n\t"}, "empty prompt"},
		{"bad format", agent.Invocation{Prompt: "p", OutputFormat: "yaml"}, "unknown output format"},
	}
	// The prompt travels as an argument, except on the command agent's
	// stdin (see TestCommandPromptMode in package command).
	asArgument := []refusal{
		{"huge prompt", agent.Invocation{Prompt: huge}, "system limit"},
		{"huge context", agent.Invocation{Prompt: "p", AppendSystemPrompt: huge}, "system limit"},
	}
	own := map[string][]refusal{
		"claude": {
			{"model like a flag", agent.Invocation{Prompt: "p", Model: "--dangerously-skip-permissions"}, "--model"},
			{"effort like a flag", agent.Invocation{Prompt: "p", Effort: "-x"}, "--effort"},
			{"session like a flag", agent.Invocation{Prompt: "p", SessionID: "-x"}, "--resume"},
			{"tool like a flag", agent.Invocation{Prompt: "p", AllowedTools: []string{"--dangerously-skip-permissions"}}, "allowed tool"},
		},
		"codex": {
			{"model like a flag", agent.Invocation{Prompt: "p", Model: "--dangerously-bypass-approvals-and-sandbox"}, "--model"},
			{"session like a flag", agent.Invocation{Prompt: "p", SessionID: "--last"}, "resume"},
			{"session with a newline", agent.Invocation{Prompt: "p", SessionID: "a\nb"}, "resume"},
			{"effort smuggling a setting", agent.Invocation{Prompt: "p", Effort: `high" sandbox_mode="danger-full-access`}, "effort"},
		},
		"gemini": {
			{"model like a flag", agent.Invocation{Prompt: "p", Model: "-y"}, "--model"},
			{"session like a flag", agent.Invocation{Prompt: "p", SessionID: "--list-sessions"}, "--resume"},
		},
		"opencode": {
			{"model like a flag", agent.Invocation{Prompt: "p", Model: "--auto"}, "-m"},
			{"effort like a flag", agent.Invocation{Prompt: "p", Effort: "-x"}, "--variant"},
			{"session like a flag", agent.Invocation{Prompt: "p", SessionID: "--continue"}, "--session"},
		},
	}
	for _, name := range Names() {
		cases := append(append([]refusal(nil), common...), own[name]...)
		if name != "command" {
			cases = append(cases, asArgument...)
		}
		for _, tt := range cases {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				a := adapter(t, name)
				if _, err := a.Command(tt.inv); err == nil || !strings.Contains(err.Error(), tt.want) ||
					!strings.HasPrefix(err.Error(), name+":") {
					t.Errorf("err = %v, want it to start with %q and mention %q", err, name+":", tt.want)
				}
				// Run refuses the same way, before anything starts.
				inv := invocation(t)
				inv.Prompt, inv.AppendSystemPrompt = tt.inv.Prompt, tt.inv.AppendSystemPrompt
				inv.OutputFormat, inv.Model, inv.Effort = tt.inv.OutputFormat, tt.inv.Model, tt.inv.Effort
				inv.SessionID, inv.AllowedTools = tt.inv.SessionID, tt.inv.AllowedTools
				res, err := a.Run(context.Background(), inv)
				var se *agent.StartError
				if err == nil || errors.As(err, &se) || res.ExitCode != -1 || res.Analysis != nil {
					t.Errorf("Run = %+v, %v; want a refusal before starting", res, err)
				}
			})
		}
	}
}

// A missing executable is a StartError that says where the command comes
// from and how to install the agent; there is no analysis.
func TestRunStartError(t *testing.T) {
	hints := map[string]string{
		"claude":   "CLAUDE_CODE_CMD",
		"codex":    "npm install -g @openai/codex",
		"gemini":   "npm install -g @google/gemini-cli",
		"opencode": "npm install -g opencode-ai",
		"command":  "--agent-cmd",
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			res, err := adapter(t, name).Run(context.Background(), invocation(t))
			var se *agent.StartError
			if !errors.As(err, &se) || res.StartErr == nil || res.Analysis != nil {
				t.Fatalf("err %v, result %+v", err, res)
			}
			for _, want := range []string{`"ralph-no-such-` + name + `"`, hints[name]} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q lacks %s", err, want)
				}
			}
		})
	}
}

// What each agent declares it can report decides which safeguards the
// loop trusts.
func TestCapabilities(t *testing.T) {
	want := map[string]agent.Capabilities{
		"claude": {StructuredOutput: true, TokenUsage: true, PermissionDenials: true, UsageLimits: true,
			SessionResume: true, ToolRestrictions: true, Streaming: true, CumulativeCost: true},
		"codex": {StructuredOutput: true, TokenUsage: true, UsageLimits: true, SessionResume: true, Streaming: true,
			CumulativeTokens: true},
		"gemini": {StructuredOutput: true, TokenUsage: true, UsageLimits: true, SessionResume: true, Streaming: true},
		"opencode": {StructuredOutput: true, TokenUsage: true, PermissionDenials: true, UsageLimits: true,
			SessionResume: true, Streaming: true},
		"command": {Streaming: true},
	}
	for _, name := range Names() {
		if got := adapter(t, name).Capabilities(); got != want[name] {
			t.Errorf("%s: %+v, want %+v", name, got, want[name])
		}
	}
}
