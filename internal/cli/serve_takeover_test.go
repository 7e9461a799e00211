package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
)

// A pinned session's host dies mid-iteration: its tree was published after
// the last call, a worker with --takeover receives it, runs the call again
// there and holds the session from then on. Nothing is lost (a file the
// agent made but never committed travels), nothing counted twice.
func TestTemporalTakeoverWhenTheHostDies(t *testing.T) {
	r := newTemporalRig(t)
	remote := filepath.Join(r.Work, "remote.git")
	r.Git(r.Work, "init", "-q", "--bare", remote)
	pidDir := t.TempDir()
	file := filepath.Join(r.Home, "handoffs", "p-task.md")
	dir, _ := r.Session("p", script.Script{Iterations: []script.Iteration{
		{Files: map[string]string{file: servetest.TaskFile("Build it", "p", true, false), "one.txt": "1\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-p", "Made step 1."+servetest.RalphStatus("IN_PROGRESS", false, 1))}},
		// The host dies during this call.
		{Sleep: script.Duration(time.Hour), PIDFile: filepath.Join(pidDir, "p.pid")},
		{Files: map[string]string{file: servetest.TaskFile("Build it", "p", true, true), "two.txt": "2\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-p", "Made step 2."+servetest.RalphStatus("IN_PROGRESS", false, 0))}},
	}})
	r.Git(dir, "remote", "add", "origin", remote)
	takeover := filepath.Join(r.Work, "takeover")
	r.Extra = append(r.Extra, "--temporal-pin", "p=host-a", "--temporal-handover", "origin", "--temporal-takeover-after", "3s")
	r.worker("a", "--host-queue", "host-a")
	r.worker("b", "--host-queue", "host-b", "--takeover", takeover)
	r.Start(1)
	r.OK("start", "p", "Build", "it")
	r.OK("loop", "p", "10")
	if w := r.workerRunning("task t1: loop 2, attempt 1"); w != "a" {
		t.Fatalf("loop 2 began on worker %s, want the host a", w)
	}
	var pid string
	for deadline := time.Now().Add(30 * time.Second); pid == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(pidDir, "p.pid"))
		pid = strings.TrimSpace(string(b))
	}
	r.killWorker("a")

	v := r.WaitFor("p", "done on the worker that took it over", servetest.StateIs("done"))
	if v.LoopCount != 2 || len(v.History) != 2 || v.History[0].Loop != 1 || v.History[1].Loop != 2 {
		t.Errorf("after the takeover: %d loops, history %+v; want 2, each once", v.LoopCount, v.History)
	}
	blog := r.wlogs["b"].String()
	if !strings.Contains(blog, "[p] took the tree over from refs/heads/ralph/handover/p") || !strings.Contains(blog, "task t1: loop 2 done") {
		t.Errorf("worker b did not take p over:\n%s", blog)
	}
	if !strings.Contains(r.Log.String(), "its calls run on host-b now") {
		t.Errorf("the daemon did not say the tree moved:\n%s", r.Log.String())
	}
	tree := filepath.Join(takeover, "p")
	for name, want := range map[string]string{"one.txt": "1\n", "two.txt": "2\n"} {
		if got, err := os.ReadFile(filepath.Join(tree, name)); err != nil || string(got) != want {
			t.Errorf("taken-over tree: %s = %q, %v; want %q", name, got, err, want)
		}
	}
	// The new host published its call too: the next takeover starts there.
	if got := r.Git(remote, "show", "refs/heads/ralph/handover/p:two.txt"); got != "2\n" {
		t.Errorf("the remote's handover branch has two.txt = %q", got)
	}
	if got := r.Git(tree, "log", "-1", "--format=%s"); got != "init\n" {
		t.Errorf("the taken-over tree's HEAD is %q, want the host's commit", got)
	}
	if processRunning(pid) {
		t.Errorf("the dead host's agent %s lives on", pid)
	}
}
