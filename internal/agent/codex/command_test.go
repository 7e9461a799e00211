package codex

import (
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/argvtest"
	"ralph/internal/gate"
)

func TestCommand(t *testing.T) {
	base := agent.Invocation{Prompt: "do the task"}
	with := func(f func(*agent.Invocation)) agent.Invocation { return argvtest.With(base, f) }
	head := []string{"codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write"}
	plus := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name    string
		cmd     string
		sandbox string
		extra   []string
		inv     agent.Invocation
		want    []string
	}{
		{"defaults", "", "", nil, base, plus(head, []string{"--", "do the task"})},
		{"model and effort", "", "", nil, with(func(i *agent.Invocation) { i.Model, i.Effort = "gpt-5.1-codex", "High" }),
			plus(head, []string{"-m", "gpt-5.1-codex", "-c", `model_reasoning_effort="high"`, "--", "do the task"})},
		// exec's options stay before "resume": it does not accept them after.
		{"resume", "", "read-only", []string{"--add-dir", "/data"}, with(func(i *agent.Invocation) { i.SessionID = "01a1fb32-e644-7040-841a-1992e7a63f0a" }),
			[]string{"codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "--add-dir", "/data",
				"resume", "01a1fb32-e644-7040-841a-1992e7a63f0a", "--", "do the task"}},
		{"full access sandbox", "", SandboxFullAccess, nil, base,
			[]string{"codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "danger-full-access", "--", "do the task"}},
		{"extra args before the prompt", "", "", []string{"--oss", "-c", "model_provider=local"}, base,
			plus(head, []string{"--oss", "-c", "model_provider=local", "--", "do the task"})},
		{"stream-json is the same stream", "", "", nil, with(func(i *agent.Invocation) { i.OutputFormat, i.Live = agent.FormatStreamJSON, true }),
			plus(head, []string{"--", "do the task"})},
		{"text drops --json", "", "", nil, with(func(i *agent.Invocation) { i.OutputFormat = agent.FormatText }),
			[]string{"codex", "exec", "--skip-git-repo-check", "--sandbox", "workspace-write", "--", "do the task"}},
		{"custom command words", `npx -y "@openai/codex@0.169.0"`, "", nil, base,
			[]string{"npx", "-y", "@openai/codex@0.169.0", "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "--", "do the task"}},
		{"prompt starting with a dash", "", "", nil, with(func(i *agent.Invocation) { i.Prompt = "- [ ] task one" }),
			plus(head, []string{"--", "- [ ] task one"})},
		// Allowed tools are Claude's: Codex has no such list and ignores it.
		{"allowed tools ignored", "", "", nil, with(func(i *agent.Invocation) { i.AllowedTools = []string{"Write", "Bash(git *)"} }),
			plus(head, []string{"--", "do the task"})},
		{"loop context appended to the prompt", "", "", nil, with(func(i *agent.Invocation) { i.AppendSystemPrompt = "[ralph loop 3]" }),
			plus(head, []string{"--", agent.PromptWithContext("do the task", "[ralph loop 3]")})},
		// The gate's server, for this call alone, before a resume: its
		// secret passed on by name, approve left out, the wait's limit raised.
		{"gate", "", "", []string{"--oss"}, with(func(i *agent.Invocation) {
			i.Gate, i.SessionID = &gate.Gate{Bridge: `/opt/ralph "x"/ralph`, Timeout: 10 * time.Minute}, "01a1fb32"
		}), plus(head, []string{
			"-c", `mcp_servers.ralph.command="/opt/ralph \"x\"/ralph"`,
			"-c", `mcp_servers.ralph.args=["mcp-bridge"]`,
			"-c", `mcp_servers.ralph.env_vars=["RALPH_CALL_DIR","RALPH_GATE_SECRET"]`,
			"-c", `mcp_servers.ralph.enabled_tools=["ask"]`,
			"-c", `mcp_servers.ralph.default_tools_approval_mode="approve"`,
			"-c", "mcp_servers.ralph.tool_timeout_sec=900",
			"--oss", "resume", "01a1fb32", "--", "do the task"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.cmd)
			a.Sandbox, a.ExtraArgs = tt.sandbox, tt.extra
			argvtest.Check(t, a, err, tt.inv, tt.want)
		})
	}
}
