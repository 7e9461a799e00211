package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/temporal/devserver"
)

// temporalRig is a fleetRig whose daemon runs its loops on a real Temporal
// dev server, on `ralph worker` processes the test starts and kills.
type temporalRig struct {
	*fleetRig
	srv     *devserver.Server
	workers map[string]*exec.Cmd
	wlogs   map[string]*lockedBuffer
}

func newTemporalRig(t *testing.T) *temporalRig {
	t.Helper()
	r := newFleetRig(t)
	srv := devserver.Start(t, filepath.Join(r.work, "temporal.db"))
	// A short heartbeat timeout: a killed worker's iteration moves on in
	// seconds, not the default half minute.
	r.extra = []string{"--backend", "temporal", "--temporal-address", srv.Addr, "--temporal-heartbeat", "3s"}
	tr := &temporalRig{fleetRig: r, srv: srv, workers: map[string]*exec.Cmd{}, wlogs: map[string]*lockedBuffer{}}
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

// worker starts `ralph worker NAME` with its own home.
func (r *temporalRig) worker(name string) {
	r.t.Helper()
	cmd := exec.Command(r.ralph, "worker", "--temporal-address", r.srv.Addr, "--home", filepath.Join(r.work, "worker-"+name))
	l := &lockedBuffer{}
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
	r.ok("answer", "q", "SQLite")
	v = r.waitFor("q", "done after the answer", stateIs("done"))
	if v.LoopCount != 2 {
		t.Errorf("q: %d loops, want 2", v.LoopCount)
	}
	// The work was shared: every worker ran agent calls.
	for name, l := range r.wlogs {
		if !strings.Contains(l.String(), "done (exit 0") {
			t.Errorf("worker %s ran no agent call", name)
		}
	}
}
