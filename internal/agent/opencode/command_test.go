package opencode

import (
	"testing"

	"ralph/internal/agent"
	"ralph/internal/agent/argvtest"
)

func TestCommand(t *testing.T) {
	base := agent.Invocation{Prompt: "do the task"}
	with := func(f func(*agent.Invocation)) agent.Invocation { return argvtest.With(base, f) }
	head := []string{"opencode", "run", "--format", "json", "--print-logs", "--log-level", "INFO"}
	tests := []struct {
		name  string
		cmd   string
		extra []string
		inv   agent.Invocation
		want  []string
	}{
		{"defaults", "", nil, base, append(head, "--", "do the task")},
		{"model, effort and session", "", nil, with(func(i *agent.Invocation) {
			i.Model, i.Effort, i.SessionID = "anthropic/claude-sonnet-4-5", "high", "ses_1ea551140ffedVQFo35xGxPtJ8"
		}),
			append(head, "-m", "anthropic/claude-sonnet-4-5", "--variant", "high", "--session", "ses_1ea551140ffedVQFo35xGxPtJ8", "--", "do the task")},
		{"extra args before the prompt", "", []string{"--agent", "build", "--auto"}, with(func(i *agent.Invocation) { i.SessionID = "ses_x" }),
			append(head, "--session", "ses_x", "--agent", "build", "--auto", "--", "do the task")},
		{"live keeps json", "", nil, with(func(i *agent.Invocation) { i.Live, i.OutputFormat = true, agent.FormatStreamJSON }),
			append(head, "--", "do the task")},
		{"text keeps the default format", "", nil, with(func(i *agent.Invocation) { i.OutputFormat = agent.FormatText }),
			[]string{"opencode", "run", "--print-logs", "--log-level", "INFO", "--", "do the task"}},
		{"the user's log flags win", "", []string{"--log-level=WARN", "--print-logs"}, base,
			[]string{"opencode", "run", "--format", "json", "--log-level=WARN", "--print-logs", "--", "do the task"}},
		{"prompt starting with a dash", "", nil, with(func(i *agent.Invocation) { i.Prompt = "- [ ] task one" }),
			append(head, "--", "- [ ] task one")},
		{"loop context appended to the prompt", "", nil, with(func(i *agent.Invocation) { i.AppendSystemPrompt = "[ralph loop 4]" }),
			append(head, "--", agent.PromptWithContext("do the task", "[ralph loop 4]"))},
		{"allowed tools ignored", "", nil, with(func(i *agent.Invocation) { i.AllowedTools = []string{"Write"} }),
			append(head, "--", "do the task")},
		{"custom command words", "npx -y opencode-ai@1.18.33", nil, base,
			append([]string{"npx", "-y", "opencode-ai@1.18.33"}, append(head[1:], "--", "do the task")...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.cmd)
			a.ExtraArgs = tt.extra
			argvtest.Check(t, a, err, tt.inv, tt.want)
		})
	}
}
