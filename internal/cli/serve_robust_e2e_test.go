package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
)

// ralphProjectFiles make a session's repository a ralph project that `ralph
// run` runs in as well.
var ralphProjectFiles = map[string]string{
	".ralph/PROMPT.md":   "Work on the plan.\n",
	".ralph/fix_plan.md": "# Plan\n\n- [ ] one\n- [ ] two\n",
	".ralph/AGENT.md":    "nothing to build\n",
}

// runProject is a session whose repository `ralph run` can loop in too;
// both play the same script (its call counter is shared).
func runProject(t *testing.T, r *servetest.Daemon, name string, s script.Script) (dir, scriptPath string) {
	t.Helper()
	dir, scriptPath, err := servetest.AgentRepo(r.Ralph, r.Fake, r.Env, r.Work, name, s, ralphProjectFiles)
	if err != nil {
		t.Fatal(err)
	}
	r.Sessions = append(r.Sessions, name+"="+dir)
	return dir, scriptPath
}

// waitFile polls path until cond holds on its content ("" when missing).
func waitForFile(t *testing.T, path, what string, cond func(string) bool) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if cond(string(b)) {
			return string(b)
		}
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("%s: never %s; last %q", path, what, b)
	return ""
}

// One tree, one loop, daemon first: while a session's loop runs, the
// daemon holds the project's lock, and `ralph run` there refuses, naming
// the daemon (its home and pid) and the session; the lock goes with the
// loop.
func TestServeHoldsTheTreeAgainstRalphRun(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	slow := script.Iteration{Sleep: script.Duration(time.Hour), StdoutLines: []json.RawMessage{servetest.ResultLine("s", "Working."+servetest.RalphStatus("IN_PROGRESS", false, 2))}}
	dir, scriptPath := runProject(t, r, "a", script.Script{RepeatLast: true, Iterations: []script.Iteration{slow}})
	r.Start(1)
	r.OK("start", "a", "Work")
	r.OK("loop", "a", "5")
	lockFile := filepath.Join(dir, ".ralph", "ralph.lock")
	waitForFile(t, lockFile, "held by the daemon", func(s string) bool { return strings.Contains(s, "ralph serve") })
	v := r.Status("a")

	cmd := exec.Command(r.Ralph, "run", "-C", dir, "--max-loops", "1")
	cmd.Env = r.Env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("ralph run beside the daemon's loop: %v\n%s", err, out)
	}
	want := fmt.Sprintf("in use by ralph serve (RALPH_HOME %s, pid %d), session a, task %s", r.Home, r.Pid(), v.ID)
	if !strings.Contains(string(out), want) {
		t.Errorf("ralph run said:\n%s\nwant it to name %q", out, want)
	}
	if calls, _ := os.ReadFile(script.ArgvLog(scriptPath)); strings.Count(string(calls), "\n") != 1 {
		t.Errorf("agent calls:\n%s\nwant only the daemon's one", calls)
	}

	r.OK("cancel", "a")
	waitForFile(t, lockFile, "released with the loop", func(s string) bool { return s == "" })
}

// One tree, one loop, `ralph run` first: a daemon task whose tree a
// `ralph run` holds waits, saying so, instead of halting, and starts by
// itself once the run ends; no two agents ever work there at once.
func TestServeTaskWaitsForATreeRalphRunHolds(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	taskFile := filepath.Join(r.Home, "handoffs", "a-task.md")
	dir, scriptPath := runProject(t, r, "a", script.Script{Iterations: []script.Iteration{
		// ralph run's call: long enough for the daemon's task to find the
		// tree held.
		{Sleep: script.Duration(5 * time.Second), Files: map[string]string{"run.txt": "run\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("r", "Run's step."+servetest.RalphStatus("IN_PROGRESS", false, 1))}},
		// The daemon's: ticks the task's checklist.
		{Files: map[string]string{taskFile: servetest.TaskFile("Work", "a", true), "serve.txt": "serve\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("s", "Done."+servetest.RalphStatus("IN_PROGRESS", false, 0))}},
	}})
	r.Start(1)
	run := servetest.Start(t, &syncbuf.Buffer{}, r.Ralph, r.Env, "run", "-C", dir, "--max-loops", "1")
	waitForFile(t, filepath.Join(dir, ".ralph", "ralph.lock"), "held by ralph run", func(s string) bool { return strings.TrimSpace(s) != "" })

	r.OK("start", "a", "Work")
	r.OK("loop", "a", "5")
	why := fmt.Sprintf("%s is in use by ralph run, pid %d", dir, run.Pid())
	v := r.WaitFor("a", "waiting for the tree", func(v serve.TaskView) bool { return v.State == "waiting" && strings.Contains(v.Activity, why) })
	if v.ExitReason != "" || !strings.Contains(v.Message, why) || v.WaitUntil.IsZero() {
		t.Errorf("waiting task: %+v", v)
	}
	if out := r.OK("status", "a"); run.Running() && (!strings.Contains(out, "waiting") || !strings.Contains(out, why)) {
		t.Errorf("ralph task status while ralph run runs:\n%s", out)
	}

	v = r.WaitFor("a", "done once the run ended", servetest.StateIs("done"))
	if run.Running() {
		t.Error("the daemon's loop started while ralph run still ran")
	}
	if v.LoopCount != 1 {
		t.Errorf("done task: %+v", v)
	}
	calls, _ := os.ReadFile(script.ArgvLog(scriptPath))
	if n := strings.Count(string(calls), "\n"); n != 2 {
		t.Errorf("%d agent calls, want ralph run's and the daemon's:\n%s", n, calls)
	}
	if strings.Contains(r.Log.String(), "halted") {
		t.Errorf("the daemon halted the task:\n%s", r.Log.String())
	}
}

// At start the daemon removes the temporary files killed writers left in
// RALPH_HOME (exactly the atomic writer's names, old enough not to be a
// write in progress), and nothing else.
func TestServeSweepsTheTempsOfKilledWriters(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	r.Session("a", script.Script{})
	stale := []string{
		".api-token.tmp-0123456789abcdef",
		"handoffs/.a-task.md.tmp-89abcdef01234567",
		"handoffs/archive/.a-t1-task.md.tmp-fedcba9876543210",
		"prompts/.a.md.tmp-00112233445566ff",
		"logs/a/.clarification.md.tmp-a0b1c2d3e4f50617",
	}
	kept := []string{
		"handoffs/notes.md",
		"handoffs/.notes.tmp-old",
		"handoffs/a-task.md.tmp-0123456789abcdef", // no leading dot
		"prompts/.a.md.tmp-0123456789ABCDEF",      // upper case
		"prompts/.b.md.tmp-0123456789abcdef0",     // 17 digits
		"requests/r1/.x.go.tmp-0123456789abcdef",  // a person's tree
		"logs/a/.young.log.tmp-0123456789abcdef",  // a write in progress
	}
	old := time.Now().Add(-time.Hour)
	for _, rel := range append(append([]string{}, stale...), kept...) {
		p := filepath.Join(r.Home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rel, "young") {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Start(1)
	for _, rel := range stale {
		if _, err := os.Stat(filepath.Join(r.Home, rel)); !os.IsNotExist(err) {
			t.Errorf("%s survived the start: %v", rel, err)
		}
		if !strings.Contains(r.Log.String(), "removed "+filepath.Join(r.Home, rel)) {
			t.Errorf("the log does not say %s was removed", rel)
		}
	}
	for _, rel := range kept {
		if _, err := os.Stat(filepath.Join(r.Home, rel)); err != nil {
			t.Errorf("%s was removed: %v", rel, err)
		}
	}
}

// fill writes into dir until its file system is full and returns the
// file that holds the space.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	// What a write of a few bytes may still find.
	for {
		if _, err := f.Write(chunk[:512]); err != nil {
			break
		}
	}
	return p
}

// A full RALPH_HOME while a task loops (a small tmpfs, filled up): the
// task is shown waiting with the reason, never halted, and goes on by
// itself once space is back, with every iteration counted once.
func TestServeWaitsOutAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI runs as root: a tmpfs RALPH_HOME needs mount")
		}
		t.Skip("mounting a small tmpfs needs root")
	}
	r := servetest.New(t, servetest.Options{Token: "full-disk-token"})
	if err := os.MkdirAll(r.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=6m,mode=0700", "tmpfs", r.Home).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", r.Home).Run() })
	const loops = 6
	step := script.Iteration{Files: map[string]string{"step.txt": "{{call}}\n"}, Sleep: script.Duration(time.Second),
		StdoutLines: []json.RawMessage{servetest.ResultLine("s", "A step."+servetest.RalphStatus("IN_PROGRESS", false, 3))}}
	_, scriptPath := r.Session("a", script.Script{RepeatLast: true, Iterations: []script.Iteration{step}})
	r.Start(1)
	r.OK("start", "a", "Work")
	r.OK("loop", "a", fmt.Sprint(loops))
	r.WaitFor("a", "past its first loop", func(v serve.TaskView) bool { return v.LoopCount >= 1 })

	filler := fill(t, r.Home)
	v := r.WaitFor("a", "waiting for disk space", func(v serve.TaskView) bool {
		if v.State == "halted" {
			t.Fatalf("halted on a full disk: %+v", v)
		}
		return v.State == "waiting" && strings.Contains(v.Activity, "disk full")
	})
	if !strings.HasSuffix(v.Activity, "; retrying") || v.WaitUntil.IsZero() || !strings.Contains(v.Message, "disk full") {
		t.Errorf("waiting task: %+v", v)
	}
	if out := r.OK("status", "a"); !strings.Contains(out, "waiting") || !strings.Contains(out, "now: waiting: disk full") {
		t.Errorf("ralph task status:\n%s", out)
	}
	held := v.LoopCount
	// While the disk stays full it counts nothing and never gives up: it
	// waits, and between waits tries the call again (running while it
	// does: the view says what happens).
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if v := r.Status("a"); (v.State != "waiting" && v.State != "running") || v.LoopCount != held {
			t.Fatalf("on a full disk: %+v", v)
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	v = r.WaitFor("a", "at its budget once space was back", func(v serve.TaskView) bool { return v.ExitReason == "max_loops" })
	// The view keeps the last 5 iterations: loops 2 to 6, each once.
	if v.State != "waiting" || v.LoopCount != loops || len(v.History) != 5 {
		t.Fatalf("after the full disk: %+v", v)
	}
	for i, h := range v.History {
		if h.Loop != loops-4+i {
			t.Errorf("history %+v: loop %d is not the %d-th", v.History, h.Loop, loops-4+i)
		}
	}
	calls, _ := os.ReadFile(script.ArgvLog(scriptPath))
	if n := strings.Count(string(calls), "\n"); n < loops {
		t.Errorf("%d agent calls for %d loops", n, loops)
	}
	if strings.Contains(r.Log.String(), " halted") {
		t.Errorf("the daemon halted the task:\n%s", r.Log.String())
	}
}

// Two daemons (two RALPH_HOMEs) with a session on one tree: the second's
// task waits for the first's loop, naming it, and a stop ends the wait
// (the task then waits for a person, not halted).
func TestServeTaskWaitsForAnotherDaemonsLoop(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	slow := script.Iteration{Sleep: script.Duration(time.Hour), StdoutLines: []json.RawMessage{servetest.ResultLine("s", "Working."+servetest.RalphStatus("IN_PROGRESS", false, 2))}}
	dir, _ := runProject(t, r, "a", script.Script{RepeatLast: true, Iterations: []script.Iteration{slow}})
	r.Start(1)
	r.OK("start", "a", "Work")
	r.OK("loop", "a", "5")
	waitForFile(t, filepath.Join(dir, ".ralph", "ralph.lock"), "held by the first daemon", func(s string) bool { return strings.Contains(s, "ralph serve") })
	first := r.Status("a")

	other := servetest.New(t, servetest.Options{})
	cmd := exec.Command(other.Ralph, "trust", "-C", dir) // the second daemon's user trusts the tree too
	cmd.Env = other.Env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("trust: %v\n%s", err, out)
	}
	other.Sessions = append(other.Sessions, "b="+dir)
	other.Start(1)
	other.OK("start", "b", "Also work")
	other.OK("loop", "b", "5")
	why := fmt.Sprintf("%s is in use by ralph serve (RALPH_HOME %s, pid %d), session a, task %s", dir, r.Home, r.Pid(), first.ID)
	other.WaitFor("b", "waiting for the first daemon's loop", func(v serve.TaskView) bool {
		if v.State == "halted" {
			t.Fatalf("halted: %+v", v)
		}
		return v.State == "waiting" && strings.Contains(v.Activity, why)
	})
	other.OK("stop", "b")
	v := other.WaitFor("b", "stopped", func(v serve.TaskView) bool { return v.ExitReason == "interrupted" })
	if v.State != "waiting" || !strings.Contains(v.Message, "stopped while waiting: "+why) || v.LoopCount != 0 {
		t.Errorf("stopped task: %+v", v)
	}
	if v := r.Status("a"); v.State != "running" {
		t.Errorf("the first daemon's task: %+v", v)
	}
}

// tryStatus is the session's task, or ok false when the daemon could not
// answer (it may be out of descriptors itself).
func tryStatus(r *servetest.Daemon, session string) (v serve.TaskView, ok bool) {
	cmd := exec.Command(r.Ralph, "task", "status", session, "--json")
	cmd.Env = r.Env
	out, err := cmd.Output()
	if err != nil || json.Unmarshal(out, &v) != nil {
		return v, false
	}
	return v, true
}

// The daemon out of file descriptors (its limit lowered under what it
// holds, as a flood of connections does): the task waits, saying so, and
// goes on once descriptors are back, every iteration counted once.
func TestServeWaitsOutExhaustedDescriptors(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prlimit (util-linux) is missing")
		}
		t.Skip("no prlimit")
	}
	r := servetest.New(t, servetest.Options{Token: "fd-token"})
	const loops = 8
	step := script.Iteration{Files: map[string]string{"step.txt": "{{call}}\n"}, Sleep: script.Duration(300 * time.Millisecond),
		StdoutLines: []json.RawMessage{servetest.ResultLine("s", "A step."+servetest.RalphStatus("IN_PROGRESS", false, 3))}}
	r.Session("a", script.Script{RepeatLast: true, Iterations: []script.Iteration{step}})
	r.Start(1)
	r.OK("start", "a", "Work")
	r.OK("loop", "a", fmt.Sprint(loops))
	r.WaitFor("a", "past its first loop", func(v serve.TaskView) bool { return v.LoopCount >= 1 })

	pid := fmt.Sprint(r.Pid())
	limit := func(n int) {
		if out, err := exec.Command("prlimit", "--pid", pid, fmt.Sprintf("--nofile=%d:", n)).CombinedOutput(); err != nil {
			t.Fatalf("prlimit: %v\n%s", err, out)
		}
	}
	t.Cleanup(func() { _ = exec.Command("prlimit", "--pid", pid, "--nofile=1024:").Run() })
	// Two descriptors above what it holds: the API can still answer, an
	// agent (logs, pipes) cannot start.
	var v serve.TaskView
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never waiting for descriptors; last %+v", v)
		}
		fds, err := os.ReadDir("/proc/" + pid + "/fd")
		if err != nil {
			t.Fatal(err)
		}
		limit(len(fds) + 2)
		var ok bool
		if v, ok = tryStatus(r, "a"); !ok {
			continue
		}
		if v.State == "halted" {
			t.Fatalf("halted on too many open files: %+v", v)
		}
		if v.State == "waiting" && strings.Contains(v.Activity, "out of file descriptors") {
			break
		}
	}
	if !strings.HasSuffix(v.Message, "; retrying") || v.WaitUntil.IsZero() || v.LoopCount >= loops {
		t.Errorf("waiting task: %+v", v)
	}

	limit(1024)
	v = r.WaitFor("a", "at its budget once descriptors were back", func(v serve.TaskView) bool { return v.ExitReason == "max_loops" })
	// The view keeps the last 5 iterations: loops 4 to 8, each once.
	if v.LoopCount != loops || len(v.History) != 5 {
		t.Fatalf("after the shortage: %+v", v)
	}
	for i, h := range v.History {
		if h.Loop != loops-4+i {
			t.Errorf("history %+v: loop %d is not the %d-th", v.History, h.Loop, loops-4+i)
		}
	}
	if strings.Contains(r.Log.String(), " halted") {
		t.Errorf("the daemon halted the task:\n%s", r.Log.String())
	}
}
