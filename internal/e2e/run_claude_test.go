// Package e2e runs the ralph binary end to end with the real Claude Code CLI
// against the project's fake Messages API on 127.0.0.1: everything between
// ralph and the model is real.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/servetest"
	"ralph/internal/store"
)

// TestMain: the ralph binary is built once for the package, without the
// race detector, which would slow ralph under the real CLIs' timeouts
// (servetest.PlainRalph).
func TestMain(m *testing.M) { os.Exit(servetest.Tests(m).Run()) }

const planMD = "# Plan\n\n## High\n- [ ] Create hello.txt\n- [ ] Check the plan\n\n## Optional\n- [ ] Polish\n"
const donePlanMD = "# Plan\n\n## High\n- [x] Create hello.txt\n- [x] Check the plan\n\n## Optional\n- [ ] Polish\n"

func newProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"PROMPT.md": "Work through .ralph/fix_plan.md, one task per iteration.\n", "fix_plan.md": planMD, "AGENT.md": "No build.\n"} {
		if err := os.WriteFile(filepath.Join(dir, ".ralph", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = gitEnv(dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func gitEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
}

type run struct {
	stdout, stderr string
	exit           int
	took           time.Duration
}

// runRalph runs `ralph run` on dir with the real claude against srv.
func runRalph(t *testing.T, dir string, env []string, args ...string) run {
	t.Helper()
	args = append([]string{"run", "-C", dir, "--agent-cmd", agenttest.ClaudeBinary(t)}, args...)
	return execRalph(t, "", append(env, "RALPH_DELAY=0", "RALPH_FAILURE_BACKOFF=0", "RALPH_CLAUDE_TIMEOUT_MINUTES=2"), args...)
}

// execRalph runs the ralph binary in dir (the current directory when "")
// with exactly env, and reports how it ended.
func execRalph(t *testing.T, dir string, env []string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, servetest.PlainRalph(t), args...)
	cmd.Dir = dir
	cmd.Env = append(env, "RALPH_TRACE="+tracePath(t))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ralph: %v", err)
	}
	t.Logf("ralph %s: exit %d in %s\nstdout:\n%s\nstderr:\n%s", args[0], r.exit, r.took.Round(time.Millisecond), r.stdout, r.stderr)
	return r
}

var (
	updateReplay = flag.Bool("update-replay", false, "save each run's decisions to internal/loop/testdata/replay")
	traces       sync.Map // test name → trace file
)

// tracePath is the test's trace of decisions; with -update-replay it is
// kept, at the end of the test, as a recorded run for the loop's replay test.
func tracePath(t *testing.T) string {
	if p, ok := traces.Load(t.Name()); ok {
		return p.(string)
	}
	p := filepath.Join(t.TempDir(), "trace.jsonl")
	traces.Store(t.Name(), p)
	if *updateReplay {
		t.Cleanup(func() {
			b, err := os.ReadFile(p)
			if err != nil || len(b) == 0 || t.Failed() {
				return
			}
			name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
			if err := os.WriteFile(filepath.Join("..", "loop", "testdata", "replay", "e2e_"+name+".jsonl"), b, 0o644); err != nil {
				t.Error(err)
			}
		})
	}
	return p
}

func status(t *testing.T, dir string) store.Status {
	t.Helper()
	st, err := store.ReadStatus(filepath.Join(dir, ".ralph", "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func statusBlock(status string, exit bool) string {
	return fmt.Sprintf("\n\n---RALPH_STATUS---\nSTATUS: %s\nTASKS_COMPLETED_THIS_LOOP: 1\nTESTS_STATUS: PASSING\nWORK_TYPE: IMPLEMENTATION\nEXIT_SIGNAL: %v\n---END_RALPH_STATUS---", status, exit)
}

// (1) Real Write and Bash calls create files; the second iteration resumes
// the first session and completes: project_complete, exit 0.
func TestRunCompletesWithClaude(t *testing.T) {
	dir := newProject(t)
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Creating hello.txt.", "Write", map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
			fakeapi.ToolTurn("", "Bash", map[string]string{"command": "git status --short"}),
			fakeapi.ToolTurn("", "Write", map[string]string{"file_path": filepath.Join(dir, ".ralph", "fix_plan.md"), "content": strings.Replace(planMD, "- [ ] Create", "- [x] Create", 1)}),
			fakeapi.TextTurn("Created hello.txt." + statusBlock("IN_PROGRESS", false)),
		}},
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Checking the plan.", "Write", map[string]string{"file_path": filepath.Join(dir, ".ralph", "fix_plan.md"), "content": donePlanMD}),
			fakeapi.TextTurn("All tasks are complete." + statusBlock("COMPLETE", true)),
		}},
	}})
	env := agenttest.ClaudeEnv(t, srv.URL)
	r := runRalph(t, dir, env)
	if r.exit != 0 || !strings.Contains(r.stdout, "project_complete") {
		t.Fatalf("exit %d, want 0 with project_complete", r.exit)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("hello.txt: %q %v", b, err)
	}
	st := status(t, dir)
	if st.ExitReason != "project_complete" || st.LoopCount != 2 || st.Totals.InputTokens == 0 {
		t.Errorf("status %+v", st)
	}
	// The second iteration's first request carries the first session's
	// conversation: the session was resumed, not started afresh.
	var resumed bool
	for _, req := range srv.MessageRequests() {
		if req.Iteration == 1 && req.Turn == 0 && req.Messages != nil && req.Messages.CountRole("assistant") >= 4 {
			resumed = true
		}
	}
	if !resumed {
		t.Error("the second iteration did not resume the first session")
	}
}

// (2) A denied Write in two iterations stops with permission_denied, exit 3.
func TestRunPermissionDeniedWithClaude(t *testing.T) {
	dir := newProject(t)
	srv := fakeapi.Start(t, fakeapi.Script{RepeatLast: true, Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Creating hello.txt.", "Write", map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
			fakeapi.TextTurn("I could not write the file." + statusBlock("IN_PROGRESS", false)),
		}},
	}})
	r := runRalph(t, dir, agenttest.ClaudeEnv(t, srv.URL), "--allowed-tools", "Read")
	if r.exit != 3 || !strings.Contains(r.stdout, "permission_denied") || !strings.Contains(r.stdout, "ALLOWED_TOOLS") {
		t.Fatalf("exit %d, want 3 naming ALLOWED_TOOLS", r.exit)
	}
	if st := status(t, dir); st.ExitReason != "permission_denied" || st.LoopCount != 2 {
		t.Errorf("status %+v", st)
	}
}

// (3) A usage-limit 429 whose reset is a few seconds ahead: ralph waits
// until then (not the default hour) and finishes the work.
func TestRunWaitsOutUsageLimitWithClaude(t *testing.T) {
	dir := newProject(t)
	reset := time.Now().Add(4 * time.Second).Truncate(time.Second)
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{fakeapi.UsageLimitTurn("five_hour", reset)}},
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Creating hello.txt.", "Write", map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
			fakeapi.ToolTurn("", "Write", map[string]string{"file_path": filepath.Join(dir, ".ralph", "fix_plan.md"), "content": donePlanMD}),
			fakeapi.TextTurn("All tasks are complete." + statusBlock("COMPLETE", true)),
		}},
	}})
	// Subscription auth: only then does the CLI report the limit and its
	// exact reset (a rate_limit_event in stream-json).
	env := agenttest.UnsetEnv(agenttest.ClaudeEnv(t, srv.URL), "ANTHROPIC_API_KEY")
	env = append(env, "CLAUDE_CODE_OAUTH_TOKEN=dummy", "RALPH_USAGE_LIMIT_MARGIN=1s")
	r := runRalph(t, dir, env, "--output-format", "stream-json", "--json")
	if r.exit != 0 {
		t.Fatalf("exit %d, want 0", r.exit)
	}
	var waited bool
	for _, line := range strings.Split(r.stdout, "\n") {
		var ev struct {
			Until time.Time `json:"until"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && strings.Contains(line, `"wait_kind":"usage_limit"`) {
			waited = true
			if d := ev.Until.Sub(reset); d < 0 || d > 2*time.Second {
				t.Errorf("waited until %s, want the reset %s plus the 1s margin", ev.Until, reset)
			}
		}
	}
	if !waited {
		t.Fatal("no usage-limit wait event")
	}
	if time.Now().Before(reset) {
		t.Error("ralph finished before the reset time")
	}
	if st := status(t, dir); st.ExitReason != "project_complete" || st.LoopCount != 2 {
		t.Errorf("status %+v", st)
	}
}
