package claude

import (
	"slices"
	"strings"
	"testing"

	"ralph/internal/agent"
	"ralph/internal/agent/argvtest"
	"ralph/internal/gate"
)

func TestCommand(t *testing.T) {
	base := agent.Invocation{Prompt: "do the task", AppendSystemPrompt: "loop 3 of 10"}
	with := func(f func(*agent.Invocation)) agent.Invocation { return argvtest.With(base, f) }
	tail := []string{"--append-system-prompt", "loop 3 of 10", "-p", "--", "do the task"}
	tests := []struct {
		name string
		cmd  string
		inv  agent.Invocation
		want []string
	}{
		{"defaults", "", base,
			append([]string{"claude", "--output-format", "json"}, tail...)},
		{"model and effort", "", with(func(i *agent.Invocation) { i.Model, i.Effort = "claude-opus-5-5", "high" }),
			append([]string{"claude", "--model", "claude-opus-5-5", "--effort", "high", "--output-format", "json"}, tail...)},
		{"resume", "", with(func(i *agent.Invocation) { i.SessionID = "1f619081-1f59-4397-bd4c-8791b3f050a0" }),
			append([]string{"claude", "--output-format", "json", "--resume", "1f619081-1f59-4397-bd4c-8791b3f050a0"}, tail...)},
		{"allowed tools one per element", "", with(func(i *agent.Invocation) {
			i.AllowedTools = []string{"Write", "Bash(git diff *)", "Read,Edit", "Write"}
		}),
			append([]string{"claude", "--output-format", "json", "--allowedTools", "Write", "Bash(git diff *)", "Read", "Edit"}, tail...)},
		{"a gate: its MCP server, the permission prompt, ask allowed", "", with(func(i *agent.Invocation) {
			i.AllowedTools, i.Gate = []string{"Write"}, &gate.Gate{Bridge: "/usr/bin/ralph"}
		}),
			append([]string{"claude", "--output-format", "json", "--allowedTools", "Write", "mcp__ralph__ask",
				"--mcp-config", `{"mcpServers":{"ralph":{"args":["mcp-bridge"],"command":"/usr/bin/ralph","timeout":2100000,"type":"stdio"}}}`,
				"--permission-prompt-tool", "mcp__ralph__approve"}, tail...)},
		{"an ask-only gate: no permission prompt", "", with(func(i *agent.Invocation) {
			i.Gate = &gate.Gate{Bridge: "/usr/bin/ralph", AskOnly: true}
		}),
			append([]string{"claude", "--output-format", "json", "--allowedTools", "mcp__ralph__ask",
				"--mcp-config", `{"mcpServers":{"ralph":{"args":["mcp-bridge"],"command":"/usr/bin/ralph","timeout":2100000,"type":"stdio"}}}`}, tail...)},
		{"stream-json adds verbose", "", with(func(i *agent.Invocation) { i.OutputFormat = agent.FormatStreamJSON }),
			append([]string{"claude", "--output-format", "stream-json", "--verbose"}, tail...)},
		{"live upgrades json to stream-json", "", with(func(i *agent.Invocation) { i.Live, i.OutputFormat = true, agent.FormatJSON }),
			append([]string{"claude", "--output-format", "stream-json", "--verbose"}, tail...)},
		{"text stays text", "", with(func(i *agent.Invocation) { i.Live, i.OutputFormat = true, agent.FormatText }),
			append([]string{"claude", "--output-format", "text"}, tail...)},
		{"custom command words", `npx -y "@anthropic-ai/claude-code@2.1.329"`, base,
			append([]string{"npx", "-y", "@anthropic-ai/claude-code@2.1.329", "--output-format", "json"}, tail...)},
		{"path with spaces", `'/opt/my tools/claude' --debug`, base,
			append([]string{"/opt/my tools/claude", "--debug", "--output-format", "json"}, tail...)},
		{"a budget's cap, to the cent below", "", with(func(i *agent.Invocation) { i.MaxBudgetUSD = 1.239 }),
			append([]string{"claude", "--output-format", "json", "--max-budget-usd", "1.23"}, tail...)},
		{"a budget's last cent", "", with(func(i *agent.Invocation) { i.MaxBudgetUSD = 0.004 }),
			append([]string{"claude", "--output-format", "json", "--max-budget-usd", "0.01"}, tail...)},
		{"no context", "", with(func(i *agent.Invocation) { i.AppendSystemPrompt = "" }),
			[]string{"claude", "--output-format", "json", "-p", "--", "do the task"}},
		{"prompt starting with a dash", "", with(func(i *agent.Invocation) { i.Prompt, i.AppendSystemPrompt = "- [ ] task one", "" }),
			[]string{"claude", "--output-format", "json", "-p", "--", "- [ ] task one"}},
		{"everything", "claude", with(func(i *agent.Invocation) {
			i.Model, i.Effort, i.SessionID, i.Live = "opus", "max", "sess-1", true
			i.AllowedTools = []string{"Write", "Bash(go test *)"}
		}),
			append([]string{"claude", "--model", "opus", "--effort", "max", "--output-format", "stream-json", "--verbose",
				"--allowedTools", "Write", "Bash(go test *)", "--resume", "sess-1"}, tail...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.cmd)
			got := argvtest.Check(t, a, err, tt.inv, tt.want)
			if slices.Contains(got, "--continue") || slices.Contains(got, "-c") {
				t.Errorf("argv holds --continue: %q", got)
			}
		})
	}
}

func TestDefaultAllowedTools(t *testing.T) {
	tools := DefaultAllowedTools()
	for _, must := range []string{"Write", "Read", "Edit", "MultiEdit", "Glob", "Grep", "TodoWrite",
		"Bash(git status *)", "Bash(git diff *)", "Bash(git commit *)", "Bash(go test *)", "Bash(npm test *)",
		"Bash(pytest *)", "Bash(cargo test *)", "Bash(make *)", "Bash(bats *)"} {
		if !slices.Contains(tools, must) {
			t.Errorf("missing %s", must)
		}
	}
	for _, tool := range tools {
		if strings.HasPrefix(tool, "Bash(") {
			pattern := strings.TrimSuffix(strings.TrimPrefix(tool, "Bash("), ")")
			// Space-star form (word boundary) or an exact command; never
			// the boundary-less "cmd*" or the legacy "cmd:*".
			if strings.Contains(pattern, ":*") || strings.HasSuffix(pattern, "*") && !strings.HasSuffix(pattern, " *") {
				t.Errorf("%s: use the \"Bash(cmd *)\" form", tool)
			}
			for _, word := range strings.Fields(pattern) {
				if slices.Contains([]string{"push", "reset", "clean", "rm", "restore", "rebase", "stash", "-D", "-f", "--force"}, word) {
					t.Errorf("%s can destroy work", tool)
				}
			}
		}
	}
	tools[0] = "changed"
	if DefaultAllowedTools()[0] == "changed" {
		t.Error("DefaultAllowedTools shares its slice")
	}
}

func TestCommandExtraArgs(t *testing.T) {
	a, _ := New("")
	a.ExtraArgs = []string{"--max-turns", "30", "--add-dir", "/data sets"}
	got, err := a.Command(agent.Invocation{Prompt: "- [ ] task", SessionID: "s1", AppendSystemPrompt: "ctx"})
	if err != nil {
		t.Fatal(err)
	}
	// The user's arguments come after ralph's flags and before "-p --",
	// so the prompt stays the last word whatever they hold.
	want := []string{"claude", "--output-format", "json", "--resume", "s1", "--append-system-prompt", "ctx",
		"--max-turns", "30", "--add-dir", "/data sets", "-p", "--", "- [ ] task"}
	if !slices.Equal(got, want) {
		t.Errorf("argv\n got %q\nwant %q", got, want)
	}
	a.ExtraArgs = []string{strings.Repeat("y", 130<<10)}
	if _, err := a.Command(agent.Invocation{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "system limit") {
		t.Errorf("huge extra argument: %v", err)
	}
}
