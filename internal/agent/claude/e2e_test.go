package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/shellwords"
)

// TestRealClaude runs the adapter's argv against the real Claude Code CLI
// and the fake model API (skipped when the CLI is not installed; see
// scripts/install-agents.sh). It pins what Command relies on: one argv
// element per allowed tool with spaces inside, "-p --" before a prompt that
// starts with a dash, stream-json with --verbose, --resume by id.
func TestRealClaude(t *testing.T) {
	bin := agenttest.ClaudeBinary(t)
	dir := t.TempDir()
	status := "Done.\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---"
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("I'll create the file.", "Write",
				map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
			fakeapi.ToolTurn("", "Bash", map[string]string{"command": "mkdir -p made", "description": "make a directory"}),
			fakeapi.TextTurn(status),
		}},
		{Turns: []fakeapi.Turn{fakeapi.TextTurn("Resumed.")}},
	}})

	a, err := New(shellwords.Join([]string{bin}))
	if err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	var mu sync.Mutex
	var rendered strings.Builder
	render := agent.RenderLive(&rendered)
	inv := agent.Invocation{
		Dir: dir, Prompt: "- [ ] create hello.txt", AppendSystemPrompt: "ralph loop 1",
		AllowedTools: []string{"Write", "Bash(mkdir -p *)"},
		Live:         true, OnEvent: func(e agent.LiveEvent) { mu.Lock(); defer mu.Unlock(); render(e) },
		Timeout:    60 * time.Second,
		Env:        agenttest.ClaudeEnv(t, fake.URL),
		StdoutPath: filepath.Join(logs, "1.out"), StderrPath: filepath.Join(logs, "1.err"),
	}
	res, err := a.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	an := res.Analysis
	if res.ExitCode != 0 || an.IsError || len(an.PermissionDenials) != 0 || an.SessionID == "" || an.Format != "stream-json" {
		stderr, _ := os.ReadFile(inv.StderrPath)
		t.Fatalf("result %+v\nanalysis %+v\nstderr %s", res, an, stderr)
	}
	if an.Status != "IN_PROGRESS" {
		t.Errorf("status %q", an.Status)
	}
	for _, p := range []string{"hello.txt", "made"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("tool did not run: %v", err)
		}
	}
	mu.Lock()
	out := rendered.String()
	mu.Unlock()
	for _, want := range []string{"I'll create the file.\n", "⚡ Write hello.txt\n", "⚡ Bash mkdir -p made\n", "Done.\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("live output lacks %q:\n%s", want, out)
		}
	}
	reqs := fake.MessageRequests()
	if len(reqs) == 0 {
		t.Fatal("no requests")
	}
	first := reqs[0].Messages
	if p := first.Prompts(); len(p) == 0 || !strings.HasSuffix(p[len(p)-1], "- [ ] create hello.txt") {
		t.Errorf("prompt seen by the model: %q", p)
	}
	if !strings.HasSuffix(first.System.Text(), "ralph loop 1") {
		t.Error("appended system prompt missing")
	}

	// Second call resumes the session by id, json output.
	inv.Live, inv.SessionID, inv.Prompt = false, an.SessionID, "continue"
	inv.StdoutPath, inv.StderrPath = filepath.Join(logs, "2.out"), filepath.Join(logs, "2.err")
	res, err = a.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Analysis.Format != "json" || res.Analysis.SessionID != an.SessionID {
		t.Errorf("resumed: %+v, analysis %+v", res, res.Analysis)
	}
	if p := fake.MessageRequests(); p[len(p)-1].Messages.CountRole("assistant") < 3 {
		t.Error("resumed call did not carry the earlier conversation")
	}
}

// TestRealClaudeInterrupt: cancelling the context stops the real CLI while
// it waits for the model, within the grace period.
func TestRealClaudeInterrupt(t *testing.T) {
	bin := agenttest.ClaudeBinary(t)
	dir := t.TempDir()
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{{Text: "late", Delay: fakeapi.Duration(time.Minute)}}},
	}})
	a, err := New(shellwords.Join([]string{bin}))
	if err != nil {
		t.Fatal(err)
	}
	a.Runner = &agent.Runner{Grace: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the request is in flight.
		for len(fake.MessageRequests()) == 0 && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	res, err := a.Run(ctx, agent.Invocation{
		Dir: dir, Prompt: "wait", Env: agenttest.ClaudeEnv(t, fake.URL), Timeout: time.Minute,
		StdoutPath: filepath.Join(dir, "out.log"), StderrPath: filepath.Join(dir, "err.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.TimedOut || time.Since(start) > 20*time.Second {
		t.Errorf("result %+v after %v", res, time.Since(start))
	}
	t.Logf("exit %d, warnings %q", res.ExitCode, res.Warnings)
}
