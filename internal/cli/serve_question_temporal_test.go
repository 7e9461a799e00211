package cli

import (
	"encoding/json"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// On the Temporal backend too a question is loop.Next's wait, inside the
// workflow: a daemon killed while it waits comes back to the same question
// (noticed once), and the answer goes to the same workflow run, whose next
// call has it in its prompt.
func TestTemporalQuestionSurvivesADaemonKill(t *testing.T) {
	r := newTemporalRig(t)
	_, scriptQ := r.Session("q", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-q", "I cannot pick a database."+servetest.Question("PostgreSQL or SQLite?"))}},
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-q", "Used SQLite, all done."+servetest.CompleteStatus)}},
	}})
	r.worker("a")
	r.Start(1)
	r.OK("start", "q", "Store things")
	r.OK("loop", "q")
	v := r.WaitFor("q", "asked", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	asked := r.workflow(v.ID)
	r.Kill()
	r.Start(1)
	v = r.WaitFor("q", "asked after the restart", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	if v.State != "waiting" || v.ExitReason != "needs_clarification" || v.Questions[0] != "PostgreSQL or SQLite?" {
		t.Fatalf("after the restart: %+v", v)
	}
	r.OK("answer", "q", "Use", "SQLite.")
	v = r.WaitFor("q", "done", servetest.StateIs("done"))
	if v.LoopCount != 2 {
		t.Errorf("answered task: loop %d", v.LoopCount)
	}
	if ended := r.workflow(v.ID); ended.Execution.RunId != asked.Execution.RunId || ended.Status != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("after the answer: run %s %s, want run %s completed", ended.Execution.RunId, ended.Status, asked.Execution.RunId)
	}
	answeredCall(t, scriptQ)
	if n := strings.Count(r.Log.String(), "notify: ❓ session q"); n != 1 {
		t.Errorf("the question was noticed %d times", n)
	}
}
