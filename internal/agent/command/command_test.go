package command

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/argvtest"
	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/shellwords"
)

func TestCommand(t *testing.T) {
	inv := agent.Invocation{Prompt: "- [ ] do the task", AppendSystemPrompt: "[ralph loop 1]",
		Model: "m", SessionID: "s", Effort: "high", AllowedTools: []string{"Write"}}
	full := agent.PromptWithContext(inv.Prompt, inv.AppendSystemPrompt)
	tests := []struct {
		name, cmd, mode string
		extra           []string
		want            []string
	}{
		{"stdin mode keeps the prompt out of argv", "my-agent --fast", "", []string{"--log", "x"}, []string{"my-agent", "--fast", "--log", "x"}},
		{"explicit stdin", "my-agent", PromptStdin, nil, []string{"my-agent"}},
		{"arg mode puts the prompt last", `'/opt/my tools/agent' -q`, PromptArg, []string{"--"}, []string{"/opt/my tools/agent", "-q", "--", full}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.cmd)
			if err != nil {
				t.Fatal(err) // a is nil
			}
			a.PromptMode, a.ExtraArgs = tt.mode, tt.extra
			argvtest.Check(t, a, nil, inv, tt.want)
		})
	}
}

// The prompt mode decides where the prompt goes, and so whether its size
// is bounded by the kernel's limit on one argument. (What every agent
// refuses is tested in package agents.)
func TestCommandPromptMode(t *testing.T) {
	huge := strings.Repeat("x", 200<<10)
	a, _ := New("agent")
	if _, err := a.Command(agent.Invocation{Prompt: huge}); err != nil {
		t.Errorf("huge prompt on stdin: %v", err)
	}
	a.PromptMode = PromptArg
	if _, err := a.Command(agent.Invocation{Prompt: huge}); err == nil || !strings.Contains(err.Error(), "system limit") {
		t.Errorf("huge prompt as argument: %v", err)
	}
	a.PromptMode = "file"
	if _, err := a.Command(agent.Invocation{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "prompt mode") {
		t.Errorf("unknown prompt mode: %v", err)
	}
	for _, bad := range []string{"", "  ", `"open`} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

func invocation(t *testing.T) agent.Invocation {
	dir := t.TempDir()
	return agent.Invocation{
		Dir: dir, Prompt: "Write hello.txt", AppendSystemPrompt: "[ralph loop 1]",
		StdoutPath: filepath.Join(dir, "logs", "out.log"), StderrPath: filepath.Join(dir, "logs", "err.log"),
	}
}

// TestRunStdin runs a real process that answers from its stdin, with a
// status block the analysis reads from the plain text.
func TestRunStdin(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "agent.sh")
	script := "#!/bin/sh\nprompt=$(cat)\nprintf 'got: %s\\n' \"$prompt\" > seen.txt\n" +
		"echo 'Wrote it.'\necho '---RALPH_STATUS---'\necho 'STATUS: COMPLETE'\necho 'EXIT_SIGNAL: true'\necho '---END_RALPH_STATUS---'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := New(shellwords.Join([]string{bin}))
	if err != nil {
		t.Fatal(err)
	}
	a.Runner = &agent.Runner{Grace: 200 * time.Millisecond}
	inv := invocation(t)
	inv.Live = true
	var mu sync.Mutex
	var lines []string
	inv.OnEvent = func(e agent.LiveEvent) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind != agent.LiveOutput {
			t.Errorf("event %+v", e)
		}
		lines = append(lines, e.Text)
	}
	res, err := a.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if an := res.Analysis; res.ExitCode != 0 || an.Format != "text" || an.Status != "COMPLETE" || !an.ExitSignal {
		t.Errorf("result %+v, analysis %+v", res, an)
	}
	seen, _ := os.ReadFile(filepath.Join(inv.Dir, "seen.txt"))
	if want := "got: " + strings.TrimRight(agent.PromptWithContext(inv.Prompt, inv.AppendSystemPrompt), "\n") + "\n"; string(seen) != want {
		t.Errorf("the command read\n%q\nwant\n%q", seen, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 5 || lines[0] != "Wrote it." {
		t.Errorf("live lines %q", lines)
	}
}

// TestRunArg passes the prompt as the last argument of the fake agent,
// which echoes it.
func TestRunArg(t *testing.T) {
	bin, err := script.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "script.json")
	err = script.Script{Iterations: []script.Iteration{{Stdout: "You said: {{prompt}}\n", Stderr: "Error: flaky disk\n", ExitCode: 3}}}.Write(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(shellwords.Join([]string{bin, "--mode", "quick"}))
	if err != nil {
		t.Fatal(err)
	}
	a.PromptMode = PromptArg
	inv := invocation(t)
	inv.Env = []string{script.EnvScript + "=" + path}
	res, err := a.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || !slices.Contains(res.Analysis.Errors, "Error: flaky disk") {
		t.Errorf("result %+v, analysis %+v", res, res.Analysis)
	}
	calls, err := script.Calls(path)
	want := []string{"--mode", "quick", agent.PromptWithContext(inv.Prompt, inv.AppendSystemPrompt)}
	if err != nil || len(calls) != 1 || !slices.Equal(calls[0].Args, want) {
		t.Errorf("calls %+v, %v", calls, err)
	}
	out, _ := os.ReadFile(inv.StdoutPath)
	if !strings.HasPrefix(string(out), "You said: Write hello.txt\n") {
		t.Errorf("stdout %q", out)
	}
}
