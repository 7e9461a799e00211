package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// A daemon killed with a paused task, a task waiting for an answer and a
// running one gets each back as it was from its store: the paused loop
// holds again (no agent call until `resume`), the question still waits for
// its answer and takes it, the running loop goes on to its budget.
func TestServeRestartRestoresPausedWaitingRunning(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	slow := func(name string, each time.Duration) script.Script {
		return script.Script{RepeatLast: true, Iterations: []script.Iteration{{
			Files: map[string]string{"work.txt": "{{call}}\n"}, Sleep: script.Duration(each),
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-"+name, "Worked."+servetest.RalphStatus("IN_PROGRESS", false, 5))},
		}}}
	}
	// p's calls are slow enough for its pause to come during its first.
	_, scriptP := r.Session("p", slow("p", 3*time.Second))
	r.Session("g", slow("g", 700*time.Millisecond))
	r.Session("q", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-q", "I cannot pick a database."+servetest.Question("PostgreSQL or SQLite?"))}},
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-q", "Used SQLite, all done."+servetest.CompleteStatus)}},
	}})
	r.Start(3)
	calls := func() int {
		b, _ := os.ReadFile(script.ArgvLog(scriptP))
		return strings.Count(string(b), "\n")
	}
	paused := func(v serve.TaskView) bool { return v.State == "running" && v.Activity == "paused" }

	r.OK("start", "--loop", "3", "q", "Pick a database")
	r.WaitFor("q", "its question", func(v serve.TaskView) bool { return v.State == "waiting" && len(v.Questions) == 1 })
	r.OK("start", "--loop", "3", "p", "Paused job")
	for deadline := time.Now().Add(60 * time.Second); calls() < 1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	r.OK("pause", "p")
	r.WaitFor("p", "paused", paused)
	before := calls()
	r.OK("start", "--loop", "3", "g", "Running job")
	r.WaitFor("g", "running", servetest.StateIs("running"))

	r.Kill()
	r.Start(3)
	g := r.WaitFor("g", "finished its loops", servetest.StateIs("waiting"))
	if g.ExitReason != "max_loops" || g.LoopCount != 3 {
		t.Errorf("the running task after the restart: %s %d/%d", g.ExitReason, g.LoopCount, g.MaxLoops)
	}
	if v := r.Status("p"); !paused(v) || calls() != before {
		t.Errorf("the paused task after the restart: %s %q, %d agent calls (%d before)", v.State, v.Activity, calls(), before)
	}
	q := r.Status("q")
	if q.State != "waiting" || len(q.Questions) != 1 || q.Questions[0] != "PostgreSQL or SQLite?" {
		t.Errorf("the waiting task after the restart: %s %v", q.State, q.Questions)
	}
	r.OK("answer", "q", "SQLite")
	if v := r.WaitFor("q", "done", servetest.StateIs("done")); v.LoopCount != 2 {
		t.Errorf("the answered task: %d loops", v.LoopCount)
	}
	r.OK("resume", "p")
	if v := r.WaitFor("p", "finished its loops", servetest.StateIs("waiting")); v.ExitReason != "max_loops" || v.LoopCount != 3 {
		t.Errorf("the resumed task: %s %d/%d", v.ExitReason, v.LoopCount, v.MaxLoops)
	}
}
