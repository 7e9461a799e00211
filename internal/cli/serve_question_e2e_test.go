package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// A question is a wait inside the task's loop, durable across the daemon's
// restarts: the task shows waiting with the question on every surface, and
// `ralph task answer` lets the same run go on — no new run starts, the loop
// number goes on, the answer is in the next call's prompt, the agent
// session that asked is resumed. The question is noticed once.
func TestServeQuestionIsAWaitInTheSameRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		between func(r *servetest.Daemon)
	}{
		{"no restart", nil},
		{"SIGTERM", func(r *servetest.Daemon) {
			if err := r.Stop(); err != nil {
				t.Fatalf("daemon after SIGTERM: %v", err)
			}
			r.Start(1)
		}},
		{"kill -9", func(r *servetest.Daemon) { r.Kill(); r.Start(1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, scriptQ := questionRig(t)
			asked(t, r)
			if tc.between != nil {
				tc.between(r)
				// The restarted daemon shows the same question, its loop
				// waiting for the answer again.
				asked(t, r)
				waitLog(t, r, "starting at loop 2")
			}
			before := len(r.Log.String())
			if v := r.View("answer", "q", "Use", "SQLite."); v.State != "running" || len(v.Questions) != 0 {
				t.Errorf("the answer's reply: %s %q", v.State, v.Questions)
			}
			v := r.WaitFor("q", "done", servetest.StateIs("done"))
			if v.LoopCount != 2 || len(v.History) != 2 || v.History[1].Loop != 2 {
				t.Errorf("answered task: loop %d, history %+v", v.LoopCount, v.History)
			}
			if after := r.Log.String()[before:]; strings.Contains(after, "starting at loop") {
				t.Errorf("the answer started a new run instead of going on with the one that waited:\n%s", after)
			}
			answeredCall(t, scriptQ)
			if n := strings.Count(r.Log.String(), "notify: ❓ session q"); n != 1 {
				t.Errorf("the question was noticed %d times", n)
			}
		})
	}
}

// A stop ends the wait for an answer: the task waits for a person with its
// question still open, and an answer then starts its loop again, which
// finds the question in its saved state and gives the next call the answer.
func TestServeStopWhileAQuestionWaits(t *testing.T) {
	r, scriptQ := questionRig(t)
	asked(t, r)
	r.OK("stop", "q")
	v := r.WaitFor("q", "stopped", func(v serve.TaskView) bool { return v.State == "waiting" && v.ExitReason == "interrupted" })
	if len(v.Questions) != 1 || v.Questions[0] != "PostgreSQL or SQLite?" {
		t.Errorf("the stopped task's questions: %q", v.Questions)
	}
	waitLog(t, r, "task "+v.ID+" waiting interrupted")
	r.OK("answer", "q", "Use", "SQLite.")
	if v := r.WaitFor("q", "done", servetest.StateIs("done")); v.LoopCount != 2 {
		t.Errorf("answered task: loop %d", v.LoopCount)
	}
	answeredCall(t, scriptQ)
	if n := strings.Count(r.Log.String(), "notify: ❓ session q"); n != 1 {
		t.Errorf("the question was noticed %d times", n)
	}
}

// questionRig is a daemon with session q, whose agent asks a question and,
// answered, finishes; its task is started and looping.
func questionRig(t *testing.T) (*servetest.Daemon, string) {
	r := servetest.New(t, servetest.Options{})
	_, scriptQ := r.Session("q", questionScript())
	r.Start(1)
	r.OK("start", "q", "Store things")
	r.OK("loop", "q")
	return r, scriptQ
}

// questionScript asks a question and, answered, finishes.
func questionScript() script.Script {
	return script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-q", "I cannot pick a database."+servetest.Question("PostgreSQL or SQLite?"))}},
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-q", "Used SQLite, all done."+servetest.CompleteStatus)}},
	}}
}

// asked checks that the task waits with its question, as `ralph task
// status` and the API show it.
func asked(t *testing.T, r *servetest.Daemon) {
	t.Helper()
	v := r.WaitFor("q", "waiting on a question", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	if v.State != "waiting" || v.ExitReason != "needs_clarification" || v.Questions[0] != "PostgreSQL or SQLite?" || v.LoopCount != 1 {
		t.Errorf("question: %+v", v)
	}
	if out := r.OK("status", "q"); !strings.Contains(out, "question: PostgreSQL or SQLite?") || !strings.Contains(out, "ralph task answer q") {
		t.Errorf("human status:\n%s", out)
	}
	token := strings.TrimSpace(readFile(t, filepath.Join(r.Home, "api-token")))
	if code, body := r.API("GET", "/api/tasks/q", token, ""); code != 200 || !strings.Contains(body, `"questions":["PostgreSQL or SQLite?"]`) {
		t.Errorf("GET /api/tasks/q: %d %s", code, body)
	}
}

// answeredCall checks the call after the answer: it resumed the session
// that asked and its prompt holds the answer.
func answeredCall(t *testing.T, scriptQ string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(readFile(t, script.ArgvLog(scriptQ))), "\n")
	var second script.Call
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &second) != nil {
		t.Fatalf("calls:\n%s", strings.Join(lines, "\n"))
	}
	if !slices.Contains(second.Args, "sess-q") {
		t.Errorf("the answered call did not resume the session that asked: %q", second.Args)
	}
	if args := strings.Join(second.Args, "\n"); !strings.Contains(args, "Q: PostgreSQL or SQLite?\nA: Use SQLite.") {
		t.Errorf("the answered call's prompt lacks the answer:\n%s", args)
	}
}

// waitLog waits for a line of the daemon's log.
func waitLog(t *testing.T, r *servetest.Daemon, line string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(r.Log.String(), line) {
			return
		}
	}
	t.Fatalf("no %q in the daemon's log:\n%s", line, r.Log.String())
}

// A cancel ends the wait at once: the task is given up, its file archived,
// the session free.
func TestServeCancelWhileAQuestionWaits(t *testing.T) {
	r, _ := questionRig(t)
	asked(t, r)
	began := time.Now()
	if v := r.View("cancel", "q"); v.State != "cancelled" {
		t.Fatalf("cancel: %+v", v)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("cancel took %s", d)
	}
	r.OK("start", "q", "Something else")
	if v := r.Status("q"); v.State != "waiting" || v.Title != "Something else" {
		t.Errorf("the session after the cancel: %+v", v)
	}
}
