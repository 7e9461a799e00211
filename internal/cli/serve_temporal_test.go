package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/syncbuf"
	"ralph/internal/temporal"
	"ralph/internal/temporal/devserver"
)

// temporalRig is a fleetRig whose daemon runs its loops on a real Temporal
// dev server, on `ralph worker` processes the test starts and kills.
type temporalRig struct {
	*fleetRig
	srv     *devserver.Server
	workers map[string]*exec.Cmd
	wlogs   map[string]*syncbuf.Buffer
}

func newTemporalRig(t *testing.T) *temporalRig {
	t.Helper()
	r := newFleetRig(t)
	srv := devserver.Start(t, filepath.Join(r.work, "temporal.db"))
	// A short heartbeat timeout: a killed worker's iteration moves on in
	// seconds, not the default half minute.
	r.extra = []string{"--backend", "temporal", "--temporal-address", srv.Addr, "--temporal-heartbeat", "3s"}
	tr := &temporalRig{fleetRig: r, srv: srv, workers: map[string]*exec.Cmd{}, wlogs: map[string]*syncbuf.Buffer{}}
	t.Cleanup(func() {
		for name := range tr.workers {
			tr.killWorker(name)
		}
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
	r.t.Helper()
	cmd := exec.Command(r.ralph, append([]string{"worker", "--temporal-address", r.srv.Addr, "--home", filepath.Join(r.work, "worker-"+name)}, extra...)...)
	l := &syncbuf.Buffer{}
	cmd.Env, cmd.Stdout, cmd.Stderr = r.env, l, l
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.workers[name], r.wlogs[name] = cmd, l
}

func (r *temporalRig) killWorker(name string) {
	if cmd := r.workers[name]; cmd != nil && cmd.Process != nil {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	delete(r.workers, name)
}

// twoSteps is an agent that ticks a two-step checklist in two calls.
func twoSteps(taskFile, session string) script.Script {
	return script.Script{Iterations: []script.Iteration{
		{Files: map[string]string{taskFile: checklist("Build it", session, true, false), "one.txt": "1\n"},
			StdoutLines: []json.RawMessage{result("sess-"+session, "Made step 1."+ralphStatus("IN_PROGRESS", 1))}},
		{Files: map[string]string{taskFile: checklist("Build it", session, true, true), "two.txt": "2\n"},
			StdoutLines: []json.RawMessage{result("sess-"+session, "Made step 2."+ralphStatus("IN_PROGRESS", 0))}},
	}}
}

// Many tasks on three workers run to done; a question asked on a worker is
// answered with `ralph task answer` and the task resumes to done.
func TestTemporalFleetEndToEnd(t *testing.T) {
	r := newTemporalRig(t)
	const n = 20
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		r.session(name, twoSteps(filepath.Join(r.home, "handoffs", name+"-task.md"), name))
	}
	r.session("q", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{result("sess-q", "I cannot pick a database.\n---CLARITY_STATUS---\nSTATUS: NEEDS_CLARIFICATION\nCLARIFICATION_QUESTIONS: PostgreSQL or SQLite?\n---END_CLARITY_STATUS---")}},
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{result("sess-q", "Used SQLite, all done.\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nTASKS_REMAINING: 0\n---END_RALPH_STATUS---")}},
	}})
	for _, w := range []string{"w1", "w2", "w3"} {
		r.worker(w)
	}
	r.start(n + 1)
	began := time.Now()
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		r.ok("start", name, "Build", "it")
		r.ok("loop", name, "10")
	}
	r.ok("start", "q", "Pick", "a", "database")
	r.ok("loop", "q")
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		v := r.waitFor(name, "done", stateIs("done"))
		if v.LoopCount != 2 || len(v.History) != 2 || v.History[1].Loop != 2 || v.CircuitBreaker.State != "CLOSED" {
			t.Errorf("%s: %d loops, history %+v, breaker %s", name, v.LoopCount, v.History, v.CircuitBreaker.State)
		}
	}
	t.Logf("%d tasks of 2 iterations on 3 workers: %s", n, time.Since(began).Round(time.Millisecond))
	v := r.waitFor("q", "asked", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	if v.State != "waiting" || v.ExitReason != "needs_clarification" || v.Questions[0] != "PostgreSQL or SQLite?" {
		t.Fatalf("question: %+v", v)
	}
	// The question is a wait inside the workflow: it runs on, and the
	// answer resumes that same run.
	asked := r.workflow(v.ID)
	if asked.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("while the question waits the workflow is %s, want running", asked.Status)
	}
	r.ok("answer", "q", "SQLite")
	v = r.waitFor("q", "done after the answer", stateIs("done"))
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
	r.t.Helper()
	c := r.srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflow(ctx, temporal.WorkflowID(taskID), "")
	if err != nil {
		r.t.Fatal(err)
	}
	return d.RawResponse.WorkflowExecutionInfo
}

// workerRunning names the worker whose log says it began what.
func (r *temporalRig) workerRunning(what string) string {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for name, l := range r.wlogs {
			if strings.Contains(l.String(), what) {
				return name
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("no worker began %q", what)
	return ""
}

// A worker killed with SIGKILL mid-iteration: after the heartbeat timeout
// the iteration runs again on the other worker, and the task completes
// with each iteration counted once.
func TestTemporalWorkerKilledMidIteration(t *testing.T) {
	r := newTemporalRig(t)
	pidDir := t.TempDir()
	file := filepath.Join(r.home, "handoffs", "k-task.md")
	steps := twoSteps(file, "k")
	// The first call hangs until its worker dies; the retry and the next
	// call tick the checklist.
	hang := script.Iteration{Sleep: script.Duration(time.Hour), PIDFile: filepath.Join(pidDir, "k.pid")}
	_, scriptK := r.session("k", script.Script{Iterations: append([]script.Iteration{hang}, steps.Iterations...)})
	r.worker("a")
	r.worker("b")
	r.start(2)
	r.ok("start", "k", "Build", "it")
	r.ok("loop", "k", "10")
	victim := r.workerRunning("task t1: loop 1, attempt 1")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(filepath.Join(pidDir, "k.pid")); len(b) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.killWorker(victim)
	v := r.waitFor("k", "done after its worker died", stateIs("done"))
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
		file := filepath.Join(r.home, "handoffs", name+"-task.md")
		var its []script.Iteration
		for i := 1; i <= 3; i++ {
			done := make([]bool, 3)
			for j := range i {
				done[j] = true
			}
			its = append(its, script.Iteration{Files: map[string]string{file: checklist("Build it", name, done...), fmt.Sprintf("f%d.txt", i): "x\n"},
				Sleep:       script.Duration(time.Second),
				StdoutLines: []json.RawMessage{result("sess-"+name, fmt.Sprintf("Step %d.", i)+ralphStatus("IN_PROGRESS", 3-i))}})
		}
		r.session(name, script.Script{Iterations: its})
	}
	r.worker("a")
	r.worker("b")
	r.start(3)
	for _, name := range names {
		r.ok("start", name, "Build", "it")
		r.ok("loop", name, "10")
	}
	r.workerRunning("loop 1, attempt 1")
	r.srv.Kill()
	time.Sleep(2 * time.Second)
	r.srv.Restart()
	// A call cut short by the outage ran again (its heartbeats were lost):
	// the script moved on, so the task may finish a loop early, but no
	// iteration is lost or counted twice.
	for _, name := range names {
		v := r.waitFor(name, "done after the server restart", stateIs("done"))
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
	r.session("p", twoSteps(filepath.Join(r.home, "handoffs", "p-task.md"), "p"))
	r.session("u", twoSteps(filepath.Join(r.home, "handoffs", "u-task.md"), "u"))
	r.extra = append(r.extra, "--temporal-pin", "p=host-b")
	r.worker("a", "--host-queue", "host-a")
	r.worker("b", "--host-queue", "host-b")
	r.start(2)
	for _, s := range []string{"p", "u"} {
		r.ok("start", s, "Build", "it")
		r.ok("loop", s, "10")
	}
	for _, s := range []string{"p", "u"} {
		if v := r.waitFor(s, "done", stateIs("done")); v.LoopCount != 2 {
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
	r.session("c", script.Script{Iterations: []script.Iteration{{Sleep: script.Duration(time.Hour), PIDFile: filepath.Join(pidDir, "c.pid")}}})
	r.worker("a")
	r.start(1)
	r.ok("start", "c", "Never", "ends")
	r.ok("loop", "c")
	r.workerRunning("task t1: loop 1, attempt 1")
	var pid string
	for deadline := time.Now().Add(30 * time.Second); pid == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(pidDir, "c.pid"))
		pid = strings.TrimSpace(string(b))
	}
	r.ok("cancel", "c")
	r.waitFor("c", "cancelled", stateIs("cancelled"))
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
	r.session("q", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{result("sess-q", "Which one?\n---CLARITY_STATUS---\nSTATUS: NEEDS_CLARIFICATION\nCLARIFICATION_QUESTIONS: Red or blue?\n---END_CLARITY_STATUS---")}},
	}})
	r.worker("a")
	r.start(1)
	r.ok("start", "q", "Paint", "it")
	r.ok("loop", "q")
	v := r.waitFor("q", "asked", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	r.ok("cancel", "q")
	r.waitFor("q", "cancelled", stateIs("cancelled"))
	if got := r.workflow(v.ID).Status; got != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Errorf("the cancelled task's workflow is %s, want cancelled", got)
	}
}
