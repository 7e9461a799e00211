package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
	"ralph/internal/store"
	"ralph/internal/syncbuf"
)

// A `ralph run` whose .ralph/ fills up (a small tmpfs mounted there) waits
// and says why instead of stopping or counting failed calls, and finishes
// its budget once space is back: every iteration counted once.
func TestRunWaitsOutAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI runs as root: a tmpfs .ralph/ needs mount")
		}
		t.Skip("mounting a small tmpfs needs root")
	}
	ralph, fake, work := servetest.Ralph(t), servetest.Fake(t), t.TempDir()
	env := servetest.Env(work, filepath.Join(work, "home"))
	dir, state := filepath.Join(work, "proj"), filepath.Join(work, "proj", ".ralph")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", state).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", state).Run() })
	const loops = 5
	scriptPath := filepath.Join(work, "agent.json")
	step := script.Iteration{Files: map[string]string{"step.txt": "{{call}}\n"}, Sleep: script.Duration(time.Second),
		StdoutLines: []json.RawMessage{servetest.ResultLine("s", "A step."+servetest.RalphStatus("IN_PROGRESS", false, 2))}}
	if err := (script.Script{RepeatLast: true, Iterations: []script.Iteration{step}}).Write(scriptPath); err != nil {
		t.Fatal(err)
	}
	if err := servetest.Repo(ralph, env, dir, map[string]string{
		".ralphrc":           fmt.Sprintf("CLAUDE_CODE_CMD=\"env %s=%s %s\"\nMAX_CALLS_PER_HOUR=10000\n", script.EnvScript, scriptPath, fake),
		".ralph/PROMPT.md":   "Work on the plan.\n",
		".ralph/fix_plan.md": "# Plan\n\n- [ ] one\n- [ ] two\n",
		".ralph/AGENT.md":    "nothing to build\n",
	}); err != nil {
		t.Fatal(err)
	}
	log := &syncbuf.Buffer{}
	run := servetest.Start(t, log, ralph, env, "run", "-C", dir, "--live", "--max-loops", fmt.Sprint(loops))
	status := func() store.Status {
		st, _ := store.ReadStatus(filepath.Join(state, "status.json"))
		return st
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) || !run.Running() {
				t.Fatalf("never %s (running %v); ralph run said:\n%s", what, run.Running(), log.String())
			}
		}
	}
	until("past its first loop", func() bool { return status().LoopCount >= 1 })

	filler := fill(t, state)
	until("waiting for disk space", func() bool { return strings.Contains(log.String(), "disk full writing "+state) })
	held := status().LoopCount
	time.Sleep(3 * time.Second)
	if !run.Running() {
		t.Fatalf("ralph run stopped on a full disk:\n%s", log.String())
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); run.Running(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("ralph run did not finish once space was back:\n%s", log.String())
		}
	}
	var ee *exec.ExitError
	if err := run.Stop(); !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Fatalf("ralph run ended with %v, want max_loops (exit 5):\n%s", err, log.String())
	}
	if st := status(); st.LoopCount != loops || st.ExitReason != "max_loops" || held >= loops {
		t.Errorf("status after the full disk: %+v (loop %d when the disk filled)", st, held)
	}
	var lines []int
	bad, err := store.ReadMetrics(filepath.Join(state, "logs", "metrics.jsonl"), func(_ int, raw json.RawMessage) error {
		var m struct {
			Loop int `json:"loop"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		lines = append(lines, m.Loop)
		return nil
	})
	if err != nil || len(bad) > 0 {
		t.Fatalf("metrics.jsonl: %v, bad lines %v", err, bad)
	}
	if fmt.Sprint(lines) != "[1 2 3 4 5]" {
		t.Errorf("metrics records of loops %v, want each of 1..%d once", lines, loops)
	}
	if !strings.Contains(log.String(), "resumed") {
		t.Errorf("no resumed line:\n%s", log.String())
	}
}
