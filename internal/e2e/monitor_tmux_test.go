package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/servetest"
)

// tmuxPane drives one tmux session on a private server socket, so the test
// neither sees nor disturbs a user's tmux.
type tmuxPane struct {
	t      *testing.T
	bin    string
	socket string
	name   string
	exit   string // where the pane's command writes ralph's exit code
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.bin, append([]string{"-S", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (p *tmuxPane) capture() string { return p.tmux("capture-pane", "-p", "-t", p.name) }

// waitFor polls the screen until it shows want, as a person would look.
func (p *tmuxPane) waitFor(want string, within time.Duration) string {
	p.t.Helper()
	return p.waitForCount(want, 1, within)
}

// waitForCount waits until want shows n times on screen.
func (p *tmuxPane) waitForCount(want string, n int, within time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(within)
	var screen string
	for time.Now().Before(deadline) {
		if screen = p.capture(); strings.Count(screen, want) >= n {
			return screen
		}
		time.Sleep(100 * time.Millisecond)
	}
	times := ""
	if n > 1 {
		times = fmt.Sprintf(" %d times", n)
	}
	p.t.Fatalf("the screen never showed %q%s; last screen:\n%s", want, times, screen)
	return ""
}

func (p *tmuxPane) keys(k string) { p.t.Helper(); p.tmux("send-keys", "-t", p.name, k) }

// The dashboard in a real terminal: `ralph run --monitor` under tmux with the
// scripted fake agent; p pauses after the running iteration, p again resumes,
// s stops after the next, q leaves the view; every step is checked on screen.
func TestMonitorInTmux(t *testing.T) {
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed; .ci/run installs it (scripts/install-test-deps.sh)")
		}
		t.Skip("tmux is not installed")
	}
	work := t.TempDir()
	fake := servetest.Fake(t)
	proj := newProject(t)
	type line = map[string]any
	iteration := func(n int, status string, exit bool, plan string) map[string]any {
		text := fmt.Sprintf("Task %d done.\n---RALPH_STATUS---\nSTATUS: %s\nEXIT_SIGNAL: %v\n---END_RALPH_STATUS---", n, status, exit)
		return map[string]any{
			// Long enough for a key press to land mid-iteration.
			"sleep": "2s",
			"stdout_lines": []line{
				{"type": "system", "subtype": "init", "session_id": "s1", "cwd": proj},
				{"type": "assistant", "message": line{"content": []line{{"type": "text", "text": fmt.Sprintf("Working on task %d.", n)}}}},
				{"type": "assistant", "message": line{"content": []line{{"type": "tool_use", "name": "Write", "input": line{"file_path": fmt.Sprintf("task%d.txt", n)}}}}},
				{"type": "result", "subtype": "success", "is_error": false, "session_id": "s1", "total_cost_usd": 0.1,
					"usage": line{"input_tokens": 100, "output_tokens": 10}, "result": text},
			},
			"files": map[string]string{fmt.Sprintf("task%d.txt", n): "x\n", ".ralph/fix_plan.md": plan},
		}
	}
	plan3 := "# Plan\n\n## High\n- [ ] one\n- [ ] two\n- [ ] three\n"
	if err := os.WriteFile(filepath.Join(proj, ".ralph", "fix_plan.md"), []byte(plan3), 0o644); err != nil {
		t.Fatal(err)
	}
	scr := map[string]any{"iterations": []any{
		iteration(1, "IN_PROGRESS", false, "# Plan\n\n## High\n- [x] one\n- [ ] two\n- [ ] three\n"),
		iteration(2, "IN_PROGRESS", false, "# Plan\n\n## High\n- [x] one\n- [x] two\n- [ ] three\n"),
		iteration(3, "COMPLETE", true, "# Plan\n\n## High\n- [x] one\n- [x] two\n- [x] three\n"),
	}}
	scriptPath := filepath.Join(work, "agent.json")
	b, _ := json.Marshal(scr)
	if err := os.WriteFile(scriptPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	exitFile := filepath.Join(work, "exit")
	p := &tmuxPane{t: t, bin: bin, socket: filepath.Join(work, "tmux.sock"), name: "ralph-e2e"}
	t.Cleanup(func() { exec.Command(bin, "-S", p.socket, "kill-server").Run() })
	shell := fmt.Sprintf("cd %s && env RALPH_DELAY=0 RALPH_FAKE_SCRIPT=%s TERM=xterm-256color %s run --monitor --agent-cmd %s; echo $? > %s; sleep 600",
		shellQuote(proj), shellQuote(scriptPath), shellQuote(servetest.PlainRalph(t)), shellQuote(fake), shellQuote(exitFile))
	p.tmux("new-session", "-d", "-s", p.name, "-x", "100", "-y", "32", "sh", "-c", shell)

	// Iteration 1 is running: its number, the agent's activity, the breaker.
	screen := p.waitFor("Iteration 1", 20*time.Second)
	p.waitFor("⚡ Write task1.txt", 10*time.Second)
	for _, want := range []string{"Circuit breaker · CLOSED", "Plan · fix_plan.md", "/3 done"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the running view lacks %q:\n%s", want, screen)
		}
	}

	// p: pause after the running iteration.
	p.keys("p")
	screen = p.waitFor("paused (p resumes)", 20*time.Second)
	if !strings.Contains(screen, "1/3 done") {
		t.Errorf("paused after iteration 1, the plan bar should say 1/3:\n%s", screen)
	}
	if st := status(t, proj); st.Status != "paused" || st.LoopCount != 1 {
		t.Errorf("status.json while paused: status %q, loop %d", st.Status, st.LoopCount)
	}
	time.Sleep(1500 * time.Millisecond)
	if st := status(t, proj); st.LoopCount != 1 {
		t.Fatalf("the loop went on while paused: loop %d", st.LoopCount)
	}

	// p again resumes; s then stops after the running iteration.
	p.keys("p")
	p.waitFor("Iteration 2", 20*time.Second)
	p.keys("s")
	screen = p.waitFor("interrupted", 20*time.Second)
	if !strings.Contains(screen, "2/3 done") {
		t.Errorf("stopped after iteration 2, the plan bar should say 2/3:\n%s", screen)
	}
	if st := status(t, proj); st.ExitReason != "interrupted" || st.LoopCount != 2 {
		t.Errorf("status.json after the stop: reason %q, loop %d", st.ExitReason, st.LoopCount)
	}

	// q leaves the view; the process ends with the stop's exit code.
	p.keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(exitFile); err == nil && len(b) > 0 {
			if got := strings.TrimSpace(string(b)); got != "130" {
				t.Errorf("ralph exited %s, want 130 (interrupted)", got)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("ralph did not exit after q; screen:\n%s", p.capture())
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
