package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
)

// The daemon with the real Claude Code CLI on two sessions: each task is
// broken into a checklist in its task file (outside the session's
// directory), worked on in two calls of one resumed agent session, and
// ends done when the agent has ticked every box.
func TestServeTwoSessionsWithClaude(t *testing.T) {
	claude := agenttest.ClaudeBinary(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	dirs := map[string]string{"a": filepath.Join(work, "src-a"), "b": filepath.Join(work, "src-b")}
	handoff := func(s string) string { return filepath.Join(home, "handoffs", s+"-task.md") }
	// One slot: a's task runs to its end, then b's; the fake hands out its
	// iterations in the order the prompts come.
	var its []fakeapi.Iteration
	for _, s := range []string{"a", "b"} {
		title := "Write " + s + ".txt"
		its = append(its,
			fakeapi.Iteration{Turns: []fakeapi.Turn{
				fakeapi.ToolTurn("Reading the task file.", "Read", map[string]string{"file_path": handoff(s)}),
				fakeapi.ToolTurn("Breaking it down.", "Write", map[string]string{"file_path": handoff(s), "content": servetest.TaskFile(title, s, false, false)}),
				fakeapi.ToolTurn("", "Write", map[string]string{"file_path": filepath.Join(dirs[s], s+".txt"), "content": s + "\n"}),
				fakeapi.ToolTurn("", "Write", map[string]string{"file_path": handoff(s), "content": servetest.TaskFile(title, s, true, false)}),
				fakeapi.TextTurn("Step 1 done." + statusBlock("IN_PROGRESS", false)),
			}},
			fakeapi.Iteration{Turns: []fakeapi.Turn{
				fakeapi.ToolTurn("Reading the task file.", "Read", map[string]string{"file_path": handoff(s)}),
				fakeapi.ToolTurn("Ticking step 2.", "Write", map[string]string{"file_path": handoff(s), "content": servetest.TaskFile(title, s, true, true)}),
				fakeapi.TextTurn("All done." + statusBlock("COMPLETE", true)),
			}},
		)
	}
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: its})
	addr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ralph := servetest.PlainRalph(t)
	env := append(agenttest.ClaudeEnv(t, srv.URL), servetest.Vars(home)...)
	env = append(env, "RALPH_CLAUDE_TIMEOUT_MINUTES=2", "RALPH_SERVER=http://"+addr)
	for name, dir := range dirs {
		files := map[string]string{".ralphrc": fmt.Sprintf("CLAUDE_CODE_CMD=%q\n", claude), "README.md": "# " + name + "\n"}
		if err := servetest.Repo(ralph, env, dir, files); err != nil {
			t.Fatal(err)
		}
	}
	var log syncbuf.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
		}
	})
	// The watchdog off: its tmux sessions would be the user's.
	servetest.Serve(t, &log, ralph, env, "--home", home, "--listen", addr, "--max-parallel", "1",
		"--session", "a="+dirs["a"], "--session", "b="+dirs["b"], "--watch-interval", "0")
	c := servetest.Client{T: t, Ralph: ralph, Env: env, Addr: addr}
	c.OK("start", "a", "Write a.txt")
	c.OK("start", "b", "Write b.txt")
	c.OK("loop", "a", "5")
	c.OK("loop", "b", "5")

	var views map[string]serve.TaskView
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		var list []serve.TaskView
		if err := json.Unmarshal([]byte(c.OK("list", "--json")), &list); err != nil {
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
