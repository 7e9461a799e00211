package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
	"ralph/internal/temporal/devserver"
)

// The gate on the Temporal backend: the real Claude Code CLI runs on a
// `ralph worker`, the daemon (`ralph serve --backend temporal`) shows what
// the call waits on, and the decision reaches the worker's call through
// the workflow, all on a real dev server.

// An ask inside a call on a worker: the task shows the question, `ralph
// task answer` answers it, and the answer is the tool's result in the same
// call.
func TestTemporalGateAskWithClaude(t *testing.T) {
	g := newTemporalGateRig(t, []fakeapi.Iteration{askIteration})
	v := g.c.WaitFor("db", "waiting with the call's question", func(v serve.TaskView) bool {
		return v.State == "waiting" && len(v.Questions) > 0
	})
	if v.Questions[0] != "Which database?" || !strings.HasPrefix(v.Message, "waiting: question q1: Which database?") ||
		len(v.Pending) != 1 || v.Pending[0].ID != "q1" {
		t.Fatalf("the task shows %q, %q, pending %+v", v.Questions, v.Message, v.Pending)
	}
	g.c.OK("answer", "db", "postgres")
	v = g.c.WaitFor("db", "done", servetest.StateIs("done"))
	reqs := g.srv.MessageRequests()
	if v.LoopCount != 1 || len(reqs) != 2 || reqs[1].Iteration != 0 || reqs[1].Turn != 1 {
		t.Fatalf("%d loops, %d requests: the answer did not come back in the same call", v.LoopCount, len(reqs))
	}
	if got := toolResultText(t, reqs[1].Body); got != "postgres" {
		t.Errorf("the model received %q as the tool's result", got)
	}
}

// A Bash command outside the allow-list waits inside the worker's call:
// approve runs it in the same call, deny refuses it and the model reads
// why; the receipt keeps the decision.
func TestTemporalGateApproveDenyWithClaude(t *testing.T) {
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprint("allow=", allow), func(t *testing.T) {
			g := newTemporalGateRig(t, []fakeapi.Iteration{bashIteration})
			v := g.decideBash(t, allow)
			want := "Bash(touch made-by-bash) allowed once (a1) by cli"
			if !allow {
				want = "Bash(touch made-by-bash) denied (a1) by cli"
			}
			if shown := g.c.OK("show", v.ID); !strings.Contains(shown, want) {
				t.Errorf("ralph task show lacks %q:\n%s", want, shown)
			}
		})
	}
}

// APPROVAL_TIMEOUT, read from the tree's settings on the worker, is the
// workflow's timer: no decision in time denies, the agent is told in the
// same call, and the receipt says why.
func TestTemporalGateApprovalTimeoutWithClaude(t *testing.T) {
	g := newTemporalGateRig(t, []fakeapi.Iteration{bashIteration}, "APPROVAL_TIMEOUT=3s\n")
	g.c.WaitFor("db", "waiting for a decision", servetest.StateIs("waiting"))
	v := g.c.WaitFor("db", "done without a decision", servetest.StateIs("done"))
	reqs := g.srv.MessageRequests()
	if v.LoopCount != 1 || len(reqs) != 2 || !strings.Contains(toolResultText(t, reqs[1].Body), "no decision within 3s: denied") {
		t.Fatalf("%d loops, %d requests; the agent got %q", v.LoopCount, len(reqs), toolResultText(t, reqs[len(reqs)-1].Body))
	}
	if _, err := os.Stat(filepath.Join(g.dir, "made-by-bash")); err == nil {
		t.Error("the command ran without a decision")
	}
	if shown := g.c.OK("show", v.ID); !strings.Contains(shown, "Bash(touch made-by-bash) denied (no decision in time) (a1)") {
		t.Errorf("the receipt lacks the timeout:\n%s", shown)
	}
}

// "Allow for this task" lives in the workflow: the task's next call runs
// the same command unasked (no item: the next one asked is a2), a
// different command still asks.
func TestTemporalGateAllowForTaskWithClaude(t *testing.T) {
	g := newTemporalGateRig(t, []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("First.", "Bash", map[string]string{"command": "echo run >> runs.txt", "description": "count"}),
			fakeapi.TextTurn("Counted once." + statusBlock("IN_PROGRESS", false)),
		}},
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Again.", "Bash", map[string]string{"command": "echo run >> runs.txt", "description": "count again"}),
			fakeapi.ToolTurn("Other.", "Bash", map[string]string{"command": "touch other", "description": "make a file"}),
			fakeapi.TextTurn("Done." + statusBlock("COMPLETE", true)),
		}},
	})
	v := g.c.WaitFor("db", "waiting for a decision", servetest.StateIs("waiting"))
	if v.Message != "waiting: approval a1 for Bash(echo run >> runs.txt)" {
		t.Fatalf("the task shows %q", v.Message)
	}
	g.c.OK("approve", "--task", "db", "a1")
	v = g.c.WaitFor("db", "waiting for the other command", func(v serve.TaskView) bool {
		return v.State == "waiting" && strings.Contains(v.Message, "touch other")
	})
	if v.Message != "waiting: approval a2 for Bash(touch other)" {
		t.Fatalf("the identical command asked again, or the other did not ask: %q", v.Message)
	}
	if runs, _ := os.ReadFile(filepath.Join(g.dir, "runs.txt")); string(runs) != "run\nrun\n" {
		t.Fatalf("runs.txt is %q; the command ran not twice", runs)
	}
	g.c.OK("deny", "db", "a2")
	v = g.c.WaitFor("db", "done", servetest.StateIs("done"))
	if _, err := os.Stat(filepath.Join(g.dir, "other")); err == nil {
		t.Error("the other command ran although denied")
	}
	shown := g.c.OK("show", v.ID)
	for _, want := range []string{
		"Bash(echo run >> runs.txt) allowed for this task (a1) by cli",
		"Bash(echo run >> runs.txt) allowed (for this task, earlier)\n",
		"Bash(touch other) denied (a2) by cli",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("ralph task show lacks %q:\n%s", want, shown)
		}
	}
}

// The daemon dies (kill -9) while a call on a worker waits for a
// decision: the call does not die with it. The restarted daemon shows the
// same item, and approving it runs the command in that same call.
func TestTemporalGateDaemonRestartWithClaude(t *testing.T) {
	g := newTemporalGateRig(t, []fakeapi.Iteration{bashIteration})
	g.c.WaitFor("db", "waiting for a decision", servetest.StateIs("waiting"))
	g.proc.Kill()
	g.proc = g.serve()
	v := g.c.WaitFor("db", "the item shown again", func(v serve.TaskView) bool { return len(v.Pending) == 1 })
	if v.State != "waiting" || v.Message != "waiting: approval a1 for Bash(touch made-by-bash)" || v.Pending[0].ID != "a1" {
		t.Fatalf("after the restart: %s, %q, %+v", v.State, v.Message, v.Pending)
	}
	g.c.OK("approve", "db", "a1")
	v = g.c.WaitFor("db", "done", servetest.StateIs("done"))
	reqs := g.srv.MessageRequests()
	if v.LoopCount != 1 || len(reqs) != 2 || reqs[1].Iteration != 0 || reqs[1].Turn != 1 {
		t.Fatalf("%d loops, %d requests: the call did not go on", v.LoopCount, len(reqs))
	}
	if _, err := os.Stat(filepath.Join(g.dir, "made-by-bash")); err != nil {
		t.Errorf("approved after the restart, the command did not run: %v", err)
	}
}

// The worker dies (kill -9) while its call waits for a decision: the call
// dies with it, the item does not. The task still shows it, a decision
// made while no worker runs is kept by the workflow, and the retried call
// (the iteration runs again on the next worker), asking for the same
// command, gets it without asking again.
func TestTemporalGateWorkerRestartWithClaude(t *testing.T) {
	g := newTemporalGateRig(t, []fakeapi.Iteration{bashIteration, bashIteration})
	g.c.WaitFor("db", "waiting for a decision", servetest.StateIs("waiting"))
	g.worker.Kill()
	if v := g.c.Status("db"); v.State != "waiting" || len(v.Pending) != 1 || v.Pending[0].ID != "a1" {
		t.Fatalf("the worker gone, the task shows %s, %+v", v.State, v.Pending)
	}
	g.c.OK("approve", "db", "a1")
	g.worker = g.startWorker()
	v := g.c.WaitFor("db", "done", servetest.StateIs("done"))
	if _, err := os.Stat(filepath.Join(g.dir, "made-by-bash")); err != nil {
		t.Fatalf("the retried call did not run the approved command: %v", err)
	}
	reqs := g.srv.MessageRequests()
	// The lost call's requests (its CLI may have sent its first one again
	// on a loaded machine), then the retried call's two: it was not asked
	// again.
	var retried []fakeapi.Request
	for _, r := range reqs {
		if r.Iteration == 1 {
			retried = append(retried, r)
		}
	}
	if last := reqs[len(reqs)-1]; v.LoopCount != 1 || len(retried) != 2 || last.Iteration != 1 || last.Turn != 1 {
		t.Fatalf("%d loops, %d requests, %d of the retried call", v.LoopCount, len(reqs), len(retried))
	}
	if shown := g.c.OK("show", v.ID); !strings.Contains(shown, "Bash(touch made-by-bash) allowed once (a1) by cli") {
		t.Errorf("the receipt lacks the decision:\n%s", shown)
	}
}

// temporalGateRig is newGateRig on the Temporal backend: a dev server, a
// worker and the daemon, each of which a test can kill and start again.
type temporalGateRig struct {
	gateRig
	worker      *servetest.Process
	startWorker func() *servetest.Process
}

func newTemporalGateRig(t *testing.T, its []fakeapi.Iteration, rc ...string) *temporalGateRig {
	t.Helper()
	claude := agenttest.ClaudeBinary(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	dir := filepath.Join(work, "src")
	temporal := devserver.Start(t, filepath.Join(work, "temporal.db"))
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: its})
	addr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ralph := servetest.PlainRalph(t)
	env := append(agenttest.ClaudeEnv(t, srv.URL), servetest.Vars(home)...)
	env = append(env, "RALPH_CLAUDE_TIMEOUT_MINUTES=1", "RALPH_SERVER=http://"+addr)
	files := map[string]string{".ralphrc": fmt.Sprintf("CLAUDE_CODE_CMD=%q\n", claude) + strings.Join(rc, ""), "README.md": "# db\n"}
	if err := servetest.Repo(ralph, env, dir, files); err != nil {
		t.Fatal(err)
	}
	var log, wlog syncbuf.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
			t.Logf("worker log:\n%s", wlog.String())
		}
	})
	serve := func() *servetest.Process {
		// A short heartbeat timeout: a killed worker's call is retried in
		// seconds.
		return servetest.Serve(t, &log, ralph, env, "--home", home, "--listen", addr, "--max-parallel", "1",
			"--session", "db="+dir, "--watch-interval", "0",
			"--backend", "temporal", "--temporal-address", temporal.Addr, "--temporal-heartbeat", "3s")
	}
	startWorker := func() *servetest.Process {
		return servetest.Start(t, &wlog, ralph, env, "worker", "--temporal-address", temporal.Addr, "--home", filepath.Join(work, "worker"))
	}
	g := &temporalGateRig{gateRig: gateRig{c: servetest.Client{T: t, Ralph: ralph, Env: env, Addr: addr}, srv: srv, home: home, dir: dir,
		proc: serve(), serve: serve}, worker: startWorker(), startWorker: startWorker}
	g.c.OK("start", "db", "Pick a database")
	g.c.OK("loop", "db", "3")
	return g
}
