package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// The watchdog against a real tmux server: a real daemon, a task started
// with `ralph task start` and no loop, and a scripted "interactive agent"
// in the tmux session claude-5 that ticks an item of the task file and
// prints a RALPH_STATUS block, then prints EXIT_SIGNAL: true. The real
// `ralph task` client sees the history, the done task, its archived file,
// and what the watchdog reads.
func TestServeWatchdogEndToEnd(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed; .ci/run installs it (scripts/install-test-deps.sh)")
		}
		t.Skip("tmux is not installed: the watchdog reads tmux panes")
	}
	r := servetest.New(t, servetest.Options{})
	dir, _ := r.Session("5", script.Script{})
	r.Extra = []string{"--watch-interval", "100ms"}
	r.Start(1)
	t.Cleanup(func() { exec.Command(tmux, "-S", r.TmuxSocket(), "kill-server").Run() })

	v := r.View("start", "5", "Implement", "user", "auth")
	if v.State != "waiting" {
		t.Fatalf("started: %+v", v)
	}
	board := waitWatchdog(r, "the missing tmux session", func(w serve.WatchStatus) bool {
		return !w.Active && w.Message == "no tmux session claude-5"
	})
	if board.Target != "claude-5" || board.TaskID != v.ID {
		t.Errorf("board: %+v", board)
	}

	// The agent: waits for its cue, ticks the first item and writes a
	// file, prints the seed's status block; at the second cue it says it
	// is done.
	work := t.TempDir()
	data := readFile(t, v.TaskFile)
	step1 := strings.Replace(data, "## RALPH_STATUS", "- [x] user model\n- [ ] login endpoint\n\n## RALPH_STATUS", 1)
	os.WriteFile(filepath.Join(work, "step1.md"), []byte(step1), 0o644)
	agent := `cd "$DIR" && echo "agent ready"
while [ ! -f "$WORK/go1" ]; do sleep 0.05; done
cp "$WORK/step1.md" "$TASK" && echo model > model.txt
printf 'Wrote the user model.\n\nRALPH_STATUS:\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\nWORK_TYPE: feature\nFILES_MODIFIED: 1\nTASKS_REMAINING: 1\n\n'
while [ ! -f "$WORK/go2" ]; do sleep 0.05; done
printf 'Login works too.\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nTASKS_REMAINING: 0\n---END_RALPH_STATUS---\n'
sleep 600`
	os.WriteFile(filepath.Join(work, "agent.sh"), []byte(agent), 0o755)
	cmd := exec.Command(tmux, "-S", r.TmuxSocket(), "new-session", "-d", "-s", "claude-5", "-x", "100", "-y", "30",
		"env", "DIR="+dir, "WORK="+work, "TASK="+v.TaskFile, "sh", filepath.Join(work, "agent.sh"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	waitWatchdog(r, "reading the pane", func(w serve.WatchStatus) bool { return w.Active && w.TaskID == v.ID })
	if out := r.OK("status", "5"); !strings.Contains(out, "now: watched: tmux claude-5") {
		t.Errorf("human status:\n%s", out)
	}

	os.WriteFile(filepath.Join(work, "go1"), nil, 0o644)
	v = r.WaitFor("5", "one block recorded", func(v serve.TaskView) bool { return len(v.History) == 1 })
	h := v.History[0]
	if h.Loop != 1 || h.StatusBlock["STATUS"] != "IN_PROGRESS" || h.StatusBlock["EXIT_SIGNAL"] != "false" || h.StatusBlock["TASKS_REMAINING"] != "1" || h.FilesModified != 1 {
		t.Errorf("history: %+v", v.History)
	}
	if v.State != "waiting" || v.LoopCount != 1 || v.CircuitBreaker.State != "CLOSED" || v.CircuitBreaker.LastProgressLoop != 1 {
		t.Errorf("task after the first block: %+v", v)
	}
	if f := readFile(t, v.TaskFile); !strings.Contains(f, "**Status:** IN_PROGRESS") || !strings.Contains(f, "WORK_TYPE: feature") || !strings.Contains(f, "- [x] user model") {
		t.Errorf("task file:\n%s", f)
	}
	board = waitWatchdog(r, "the block's STATUS", func(w serve.WatchStatus) bool { return w.Status == "IN_PROGRESS" })
	if !board.Active || board.Seen.IsZero() {
		t.Errorf("board: %+v", board)
	}

	os.WriteFile(filepath.Join(work, "go2"), nil, 0o644)
	v = r.WaitFor("5", "done", servetest.StateIs("done"))
	if v.ExitReason != "project_complete" || len(v.History) != 2 || v.History[1].StatusBlock["EXIT_SIGNAL"] != "true" || v.LoopCount != 2 {
		t.Errorf("done task: %+v", v)
	}
	archived := filepath.Join(r.Home, "handoffs", "archive", "5-"+v.ID+"-task.md")
	if v.TaskFile != archived {
		t.Errorf("task file %s, want %s", v.TaskFile, archived)
	}
	if f := readFile(t, archived); !strings.Contains(f, "**Status:** DONE") || !strings.Contains(f, "EXIT_SIGNAL: true") {
		t.Errorf("archived task file:\n%s", f)
	}
	if _, err := os.Stat(filepath.Join(r.Home, "handoffs", "5-task.md")); !os.IsNotExist(err) {
		t.Errorf("the finished task file stayed: %v", err)
	}
	if out := r.OK("watchdog"); !strings.Contains(out, "claude-5") || !strings.Contains(out, "is done") {
		t.Errorf("ralph task watchdog:\n%s", out)
	}
	if log := r.Log.String(); !strings.Contains(log, "notify: ✅ session 5") || !strings.Contains(log, "watchdog: STATUS COMPLETE, EXIT_SIGNAL true on tmux claude-5") {
		t.Errorf("daemon log:\n%s", log)
	}
}

// waitWatchdog polls `ralph task watchdog --json` until session 5's entry
// satisfies cond.
func waitWatchdog(r *servetest.Daemon, what string, cond func(serve.WatchStatus) bool) serve.WatchStatus {
	r.T.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		last = r.OK("watchdog", "--json")
		var list []serve.WatchStatus
		if err := json.Unmarshal([]byte(last), &list); err != nil {
			r.T.Fatalf("watchdog --json: %v %s", err, last)
		}
		for _, w := range list {
			if w.Session == "5" && cond(w) {
				return w
			}
		}
	}
	r.T.Fatalf("the watchdog never showed %s; last: %s", what, last)
	return serve.WatchStatus{}
}
