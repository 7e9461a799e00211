package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
	"ralph/internal/temporal"
	"ralph/internal/temporal/devserver"
)

// temporalRig is a daemon rig whose daemon runs its loops on a real
// Temporal dev server, on `ralph worker` processes the test starts and
// kills.
type temporalRig struct {
	*servetest.Daemon
	srv     *devserver.Server
	workers map[string]*servetest.Process
	wlogs   map[string]*syncbuf.Buffer
}

func newTemporalRig(t *testing.T) *temporalRig {
	t.Helper()
	return onTemporal(t, servetest.New(t, servetest.Options{}))
}

// onTemporal puts a daemon rig not yet started on a dev server of its own.
func onTemporal(t *testing.T, r *servetest.Daemon) *temporalRig {
	t.Helper()
	srv := devserver.Start(t, filepath.Join(r.Work, "temporal.db"))
	// A short heartbeat timeout: a killed worker's iteration moves on in
	// seconds, not the default half minute.
	r.Extra = []string{"--backend", "temporal", "--temporal-address", srv.Addr, "--temporal-heartbeat", "3s"}
	tr := &temporalRig{Daemon: r, srv: srv, workers: map[string]*servetest.Process{}, wlogs: map[string]*syncbuf.Buffer{}}
	// The workers stop with the test (servetest.Start); their logs are
	// the story of a failure.
	t.Cleanup(func() {
		if t.Failed() {
			for name, l := range tr.wlogs {
				t.Logf("worker %s log:\n%s", name, l.String())
			}
		}
	})
	return tr
}

// worker starts `ralph worker NAME` with its own home and extra flags.
func (r *temporalRig) worker(name string, extra ...string) {
	r.T.Helper()
	l := &syncbuf.Buffer{}
	r.workers[name] = servetest.Start(r.T, l, r.Ralph, r.Env,
		append([]string{"worker", "--temporal-address", r.srv.Addr, "--home", filepath.Join(r.Work, "worker-"+name)}, extra...)...)
	r.wlogs[name] = l
}

func (r *temporalRig) killWorker(name string) {
	if p := r.workers[name]; p != nil {
		p.Kill()
	}
	delete(r.workers, name)
}

// twoSteps is an agent that ticks a two-step checklist in two calls.
func twoSteps(taskFile, session string) script.Script {
	return script.Script{Iterations: []script.Iteration{
		{Files: map[string]string{taskFile: servetest.TaskFile("Build it", session, true, false), "one.txt": "1\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-"+session, "Made step 1."+servetest.RalphStatus("IN_PROGRESS", false, 1))}},
		{Files: map[string]string{taskFile: servetest.TaskFile("Build it", session, true, true), "two.txt": "2\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-"+session, "Made step 2."+servetest.RalphStatus("IN_PROGRESS", false, 0))}},
	}}
}

// Many tasks on three workers run to done; a question asked on a worker is
// answered with `ralph task answer` and the task resumes to done.
func TestTemporalFleetEndToEnd(t *testing.T) {
	r := newTemporalRig(t)
	const n = 20
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		r.Session(name, twoSteps(filepath.Join(r.Home, "handoffs", name+"-task.md"), name))
	}
	r.Session("q", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-q", "I cannot pick a database."+servetest.Question("PostgreSQL or SQLite?"))}},
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-q", "Used SQLite, all done."+servetest.CompleteStatus)}},
	}})
	for _, w := range []string{"w1", "w2", "w3"} {
		r.worker(w)
	}
	r.Start(n + 1)
	began := time.Now()
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		r.OK("start", name, "Build", "it")
		r.OK("loop", name, "10")
	}
	r.OK("start", "q", "Pick", "a", "database")
	r.OK("loop", "q")
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		v := r.WaitFor(name, "done", servetest.StateIs("done"))
		if v.LoopCount != 2 || len(v.History) != 2 || v.History[1].Loop != 2 || v.CircuitBreaker.State != "CLOSED" {
			t.Errorf("%s: %d loops, history %+v, breaker %s", name, v.LoopCount, v.History, v.CircuitBreaker.State)
		}
	}
	t.Logf("%d tasks of 2 iterations on 3 workers: %s", n, time.Since(began).Round(time.Millisecond))
	v := r.WaitFor("q", "asked", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	if v.State != "waiting" || v.ExitReason != "needs_clarification" || v.Questions[0] != "PostgreSQL or SQLite?" {
		t.Fatalf("question: %+v", v)
	}
	// The question is a wait inside the workflow: it runs on, and the
	// answer resumes that same run.
	asked := r.workflow(v.ID)
	if asked.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("while the question waits the workflow is %s, want running", asked.Status)
	}
	r.OK("answer", "q", "SQLite")
	v = r.WaitFor("q", "done after the answer", servetest.StateIs("done"))
	if v.LoopCount != 2 {
		t.Errorf("q: %d loops, want 2", v.LoopCount)
	}
	if ended := r.workflow(v.ID); ended.Execution.RunId != asked.Execution.RunId || ended.Status != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("after the answer: run %s %s, want run %s completed", ended.Execution.RunId, ended.Status, asked.Execution.RunId)
	}
	// The work was shared: every worker ran agent calls.
	for name, l := range r.wlogs {
		if !strings.Contains(l.String(), "done (exit 0") {
			t.Errorf("worker %s ran no agent call", name)
		}
	}
}

// workflow describes the task's workflow, as Temporal has it.
func (r *temporalRig) workflow(taskID string) *workflowpb.WorkflowExecutionInfo {
	r.T.Helper()
	c := r.srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflow(ctx, temporal.WorkflowID(taskID), "")
	if err != nil {
		r.T.Fatal(err)
	}
	return d.RawResponse.WorkflowExecutionInfo
}

// workerRunning names the worker whose log says it began what.
func (r *temporalRig) workerRunning(what string) string {
	r.T.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for name, l := range r.wlogs {
			if strings.Contains(l.String(), what) {
				return name
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.T.Fatalf("no worker began %q", what)
	return ""
}

// A worker killed with SIGKILL mid-iteration: after the heartbeat timeout
// the iteration runs again on the other worker, and the task completes
// with each iteration counted once.
func TestTemporalWorkerKilledMidIteration(t *testing.T) {
	r := newTemporalRig(t)
	pidDir := t.TempDir()
	file := filepath.Join(r.Home, "handoffs", "k-task.md")
	steps := twoSteps(file, "k")
	// The first call hangs until its worker dies; the retry and the next
	// call tick the checklist.
	hang := script.Iteration{Sleep: script.Duration(time.Hour), PIDFile: filepath.Join(pidDir, "k.pid")}
	_, scriptK := r.Session("k", script.Script{Iterations: append([]script.Iteration{hang}, steps.Iterations...)})
	r.worker("a")
	r.worker("b")
	r.Start(2)
	r.OK("start", "k", "Build", "it")
	r.OK("loop", "k", "10")
	victim := r.workerRunning("task t1: loop 1, attempt 1")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(filepath.Join(pidDir, "k.pid")); len(b) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.killWorker(victim)
	v := r.WaitFor("k", "done after its worker died", servetest.StateIs("done"))
	if v.LoopCount != 2 || len(v.History) != 2 || v.History[0].Loop != 1 || v.History[1].Loop != 2 {
		t.Errorf("after the kill: %d loops, history %+v; want 2, each once", v.LoopCount, v.History)
	}
	other := "a"
	if victim == "a" {
		other = "b"
	}
	if !strings.Contains(r.wlogs[other].String(), "task t1: loop 1, attempt 2") {
		t.Errorf("worker %s did not retry the iteration:\n%s", other, r.wlogs[other].String())
	}
	if calls := readFile(t, script.ArgvLog(scriptK)); strings.Count(calls, "\n") != 3 {
		t.Errorf("agent calls: %d, want 3 (the killed one, its retry, the next)", strings.Count(calls, "\n"))
	}
	if pid := strings.TrimSpace(readFile(t, filepath.Join(pidDir, "k.pid"))); processRunning(pid) {
		t.Errorf("the killed worker's agent %s lives on", pid)
	}
}

// The dev server killed and restarted on the same database while tasks
// run: every task completes, each iteration counted once.
func TestTemporalServerRestart(t *testing.T) {
	r := newTemporalRig(t)
	names := []string{"x", "y", "z"}
	for _, name := range names {
		file := filepath.Join(r.Home, "handoffs", name+"-task.md")
		var its []script.Iteration
		for i := 1; i <= 3; i++ {
			done := make([]bool, 3)
			for j := range i {
				done[j] = true
			}
			its = append(its, script.Iteration{Files: map[string]string{file: servetest.TaskFile("Build it", name, done...), fmt.Sprintf("f%d.txt", i): "x\n"},
				Sleep:       script.Duration(time.Second),
				StdoutLines: []json.RawMessage{servetest.ResultLine("sess-"+name, fmt.Sprintf("Step %d.", i)+servetest.RalphStatus("IN_PROGRESS", false, 3-i))}})
		}
		r.Session(name, script.Script{Iterations: its})
	}
	r.worker("a")
	r.worker("b")
	r.Start(3)
	for _, name := range names {
		r.OK("start", name, "Build", "it")
		r.OK("loop", name, "10")
	}
	r.workerRunning("loop 1, attempt 1")
	r.srv.Kill()
	time.Sleep(2 * time.Second)
	r.srv.Restart()
	// A call cut short by the outage ran again (its heartbeats were lost):
	// the script moved on, so the task may finish a loop early, but no
	// iteration is lost or counted twice.
	for _, name := range names {
		v := r.WaitFor(name, "done after the server restart", servetest.StateIs("done"))
		if v.LoopCount < 2 || v.LoopCount > 3 || len(v.History) != v.LoopCount {
			t.Errorf("%s: %d loops, history %+v", name, v.LoopCount, v.History)
		}
		for i, h := range v.History {
			if h.Loop != i+1 {
				t.Errorf("%s: iteration %d is loop %d", name, i+1, h.Loop)
			}
		}
	}
}

// A session pinned to a host's queue has its agent calls run only by the
// worker of that host; the decisions may be made by any.
func TestTemporalPinnedSession(t *testing.T) {
	r := newTemporalRig(t)
	r.Session("p", twoSteps(filepath.Join(r.Home, "handoffs", "p-task.md"), "p"))
	r.Session("u", twoSteps(filepath.Join(r.Home, "handoffs", "u-task.md"), "u"))
	r.Extra = append(r.Extra, "--temporal-pin", "p=host-b")
	r.worker("a", "--host-queue", "host-a")
	r.worker("b", "--host-queue", "host-b")
	r.Start(2)
	for _, s := range []string{"p", "u"} {
		r.OK("start", s, "Build", "it")
		r.OK("loop", s, "10")
	}
	for _, s := range []string{"p", "u"} {
		if v := r.WaitFor(s, "done", servetest.StateIs("done")); v.LoopCount != 2 {
			t.Errorf("%s: %d loops, want 2", s, v.LoopCount)
		}
	}
	if strings.Contains(r.wlogs["a"].String(), "[p]") || strings.Count(r.wlogs["b"].String(), "[p] task t1: loop") != 4 {
		t.Errorf("p's calls ran off its host:\nworker a:\n%s\nworker b:\n%s", r.wlogs["a"].String(), r.wlogs["b"].String())
	}
}

// `ralph task cancel` cancels the workflow: the agent running on a worker
// is killed and the task ends cancelled.
func TestTemporalCancel(t *testing.T) {
	r := newTemporalRig(t)
	pidDir := t.TempDir()
	r.Session("c", script.Script{Iterations: []script.Iteration{{Sleep: script.Duration(time.Hour), PIDFile: filepath.Join(pidDir, "c.pid")}}})
	r.worker("a")
	r.Start(1)
	r.OK("start", "c", "Never", "ends")
	r.OK("loop", "c")
	r.workerRunning("task t1: loop 1, attempt 1")
	var pid string
	for deadline := time.Now().Add(30 * time.Second); pid == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(pidDir, "c.pid"))
		pid = strings.TrimSpace(string(b))
	}
	r.OK("cancel", "c")
	r.WaitFor("c", "cancelled", servetest.StateIs("cancelled"))
	deadline := time.Now().Add(15 * time.Second)
	for processRunning(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if processRunning(pid) {
		t.Errorf("the cancelled task's agent %s lives on", pid)
	}
}

// A task cancelled while its question waits ends its workflow too.
func TestTemporalCancelWhileAsking(t *testing.T) {
	r := newTemporalRig(t)
	r.Session("q", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-q", "Which one?"+servetest.Question("Red or blue?"))}},
	}})
	r.worker("a")
	r.Start(1)
	r.OK("start", "q", "Paint", "it")
	r.OK("loop", "q")
	v := r.WaitFor("q", "asked", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	r.OK("cancel", "q")
	r.WaitFor("q", "cancelled", servetest.StateIs("cancelled"))
	if got := r.workflow(v.ID).Status; got != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Errorf("the cancelled task's workflow is %s, want cancelled", got)
	}
}
