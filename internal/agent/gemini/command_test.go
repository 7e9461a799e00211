package gemini

import (
	"testing"

	"ralph/internal/agent"
	"ralph/internal/agent/argvtest"
)

func TestCommand(t *testing.T) {
	base := agent.Invocation{Prompt: "do the task"}
	with := func(f func(*agent.Invocation)) agent.Invocation { return argvtest.With(base, f) }
	head := func(format, mode string) []string {
		return []string{"gemini", "--output-format", format, "--approval-mode", mode, "--skip-trust"}
	}
	tests := []struct {
		name  string
		cmd   string
		mode  string
		extra []string
		inv   agent.Invocation
		want  []string
	}{
		{"defaults", "", "", nil, base, append(head("json", "yolo"), "--prompt=do the task")},
		{"model", "", "", nil, with(func(i *agent.Invocation) { i.Model = "gemini-2.5-flash" }),
			append(head("json", "yolo"), "-m", "gemini-2.5-flash", "--prompt=do the task")},
		{"resume", "", "", nil, with(func(i *agent.Invocation) { i.SessionID = "890dbe94-8a97-4f53-8e3e-2c3e63d20002" }),
			append(head("json", "yolo"), "--resume", "890dbe94-8a97-4f53-8e3e-2c3e63d20002", "--prompt=do the task")},
		{"approval mode", "", ApprovalAutoEdit, nil, base, append(head("json", "auto_edit"), "--prompt=do the task")},
		{"extra args before the prompt", "", "", []string{"--include-directories", "../shared", "--debug"}, base,
			append(head("json", "yolo"), "--include-directories", "../shared", "--debug", "--prompt=do the task")},
		{"live upgrades json to stream-json", "", "", nil, with(func(i *agent.Invocation) { i.Live = true }),
			append(head("stream-json", "yolo"), "--prompt=do the task")},
		{"text stays text", "", "", nil, with(func(i *agent.Invocation) { i.Live, i.OutputFormat = true, agent.FormatText }),
			append(head("text", "yolo"), "--prompt=do the task")},
		// Joined to its flag: a separate "- [ ] …" is read as an option.
		{"prompt starting with a dash", "", "", nil, with(func(i *agent.Invocation) { i.Prompt = "- [ ] task one" }),
			append(head("json", "yolo"), "--prompt=- [ ] task one")},
		{"loop context appended to the prompt", "", "", nil, with(func(i *agent.Invocation) { i.AppendSystemPrompt = "[ralph loop 2]" }),
			append(head("json", "yolo"), "--prompt="+agent.PromptWithContext("do the task", "[ralph loop 2]"))},
		{"allowed tools and effort ignored", "", "", nil, with(func(i *agent.Invocation) { i.AllowedTools, i.Effort = []string{"Write"}, "high" }),
			append(head("json", "yolo"), "--prompt=do the task")},
		{"custom command words", `npx -y "@google/gemini-cli@0.61.0"`, "", nil, base,
			append([]string{"npx", "-y", "@google/gemini-cli@0.61.0"}, append(head("json", "yolo")[1:], "--prompt=do the task")...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.cmd)
			a.ApprovalMode, a.ExtraArgs = tt.mode, tt.extra
			argvtest.Check(t, a, err, tt.inv, tt.want)
		})
	}
}
