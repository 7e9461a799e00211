package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/serve"
	"ralph/internal/syncbuf"
)

// taskFile is a task file as Claude leaves it after its Write: the
// checklist it made, ticked as far as done.
func taskFile(title, session string, done ...bool) string {
	s := fmt.Sprintf("# Task: %s\n\n**Session:** %s\n**Status:** IN_PROGRESS\n\n## Checklist\n\n", title, session)
	for i, d := range done {
		box := " "
		if d {
			box = "x"
		}
		s += fmt.Sprintf("- [%s] step %d\n", box, i+1)
	}
	return s + "\n## RALPH_STATUS\n"
}

// The daemon with the real Claude Code CLI on two sessions: each task is
// broken into a checklist in its task file (outside the session's
// directory), worked on in two calls of one resumed agent session, and
// ends done when the agent has ticked every box.
func TestServeTwoSessionsWithClaude(t *testing.T) {
	claude := agenttest.ClaudeBinary(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	dirs := map[string]string{}
	for _, name := range []string{"a", "b"} {
		dir := filepath.Join(work, "src-"+name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs[name] = dir
	}
	handoff := func(s string) string { return filepath.Join(home, "handoffs", s+"-task.md") }
	// One slot: a's task runs to its end, then b's; the fake hands out its
	// iterations in the order the prompts come.
	var its []fakeapi.Iteration
	for _, s := range []string{"a", "b"} {
		title := "Write " + s + ".txt"
		its = append(its,
			fakeapi.Iteration{Turns: []fakeapi.Turn{
				fakeapi.ToolTurn("Reading the task file.", "Read", map[string]string{"file_path": handoff(s)}),
				fakeapi.ToolTurn("Breaking it down.", "Write", map[string]string{"file_path": handoff(s), "content": taskFile(title, s, false, false)}),
				fakeapi.ToolTurn("", "Write", map[string]string{"file_path": filepath.Join(dirs[s], s+".txt"), "content": s + "\n"}),
				fakeapi.ToolTurn("", "Write", map[string]string{"file_path": handoff(s), "content": taskFile(title, s, true, false)}),
				fakeapi.TextTurn("Step 1 done." + statusBlock("IN_PROGRESS", false)),
			}},
			fakeapi.Iteration{Turns: []fakeapi.Turn{
				fakeapi.ToolTurn("Reading the task file.", "Read", map[string]string{"file_path": handoff(s)}),
				fakeapi.ToolTurn("Ticking step 2.", "Write", map[string]string{"file_path": handoff(s), "content": taskFile(title, s, true, true)}),
				fakeapi.TextTurn("All done." + statusBlock("COMPLETE", true)),
			}},
		)
	}
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: its})
	env := append(agenttest.ClaudeEnv(t, srv.URL), "RALPH_DELAY=0", "RALPH_FAILURE_BACKOFF=0", "RALPH_CLAUDE_TIMEOUT_MINUTES=2",
		"RALPH_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	for name, dir := range dirs {
		rc := fmt.Sprintf("CLAUDE_CODE_CMD=%q\n", claude)
		if err := os.WriteFile(filepath.Join(dir, ".ralphrc"), []byte(rc), 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "README.md"), []byte("# "+name+"\n"), 0o644)
		for _, args := range [][]string{{"trust", "-C", dir}} {
			if r := execRalph(t, "", env, args...); r.exit != 0 {
				t.Fatalf("ralph %v: exit %d", args, r.exit)
			}
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env = append(env, "RALPH_SERVER=http://"+addr)

	var log syncbuf.Buffer
	// The watchdog off: its tmux sessions would be the user's.
	daemon := exec.Command(ralphBin, "serve", "--home", home, "--listen", addr, "--max-parallel", "1",
		"--session", "a="+dirs["a"], "--session", "b="+dirs["b"], "--watch-interval", "0")
	daemon.Env, daemon.Stdout, daemon.Stderr = env, &log, &log
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		daemon.Process.Signal(syscall.SIGTERM)
		daemon.Wait()
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "listening on"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon never listened")
		}
	}
	task := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(ralphBin, append([]string{"task"}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ralph task %v: %v\n%s%s", args, err, out, errOut(err))
		}
		return string(out)
	}
	task("start", "a", "Write a.txt")
	task("start", "b", "Write b.txt")
	task("loop", "a", "5")
	task("loop", "b", "5")

	var views map[string]serve.TaskView
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		var list []serve.TaskView
		if err := json.Unmarshal([]byte(task("list", "--json")), &list); err != nil {
			t.Fatal(err)
		}
		views = map[string]serve.TaskView{}
		finished := 0
		for _, v := range list {
			views[v.Session] = v
			if v.State == "done" || v.State == "halted" {
				finished++
			}
		}
		if finished == 2 {
			break
		}
	}
	for _, s := range []string{"a", "b"} {
		v := views[s]
		if v.State != "done" || v.ExitReason != "plan_complete" && v.ExitReason != "project_complete" || v.LoopCount != 2 || v.Origin != "cli" {
			t.Errorf("session %s: %s %s after %d loops: %s", s, v.State, v.ExitReason, v.LoopCount, v.Message)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dirs[s], s+".txt")); err != nil || string(b) != s+"\n" {
			t.Errorf("%s.txt: %q %v", s, b, err)
		}
		archived, err := os.ReadFile(filepath.Join(home, "handoffs", "archive", s+"-"+v.ID+"-task.md"))
		if err != nil || !bytes.Contains(archived, []byte("- [x] step 2")) || !bytes.Contains(archived, []byte("**Status:** DONE")) {
			t.Errorf("archived task file of %s: %v\n%s", s, err, archived)
		}
		if len(v.History) != 2 || v.History[1].StatusBlock["EXIT_SIGNAL"] != "true" {
			t.Errorf("history of %s: %+v", s, v.History)
		}
	}
	// The second call of each task resumed the first one's conversation.
	resumed := 0
	for _, req := range srv.MessageRequests() {
		if (req.Iteration == 1 || req.Iteration == 3) && req.Turn == 0 && req.Messages != nil && req.Messages.CountRole("assistant") >= 4 {
			resumed++
		}
	}
	if resumed != 2 {
		t.Errorf("%d of 2 second calls resumed their session", resumed)
	}
}

func errOut(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
