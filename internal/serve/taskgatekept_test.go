package serve

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// The decisions made after a restart reach the next call as an answer in
// its prompt; an answer already waiting for that call stays first.
func TestWithKeptAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		st       loop.State
		wantLoop int
		want     string
	}{
		{"nothing waiting", loop.State{Loop: 4}, 5, "Bash(x): allowed"},
		{"an answer for the call", loop.State{Loop: 4, Ask: loop.Ask{Loop: 4, Questions: []string{"Which?"}, Answer: "red", By: "cli"}}, 4, "red\nBash(x): allowed"},
		{"a question nobody answered is not an answer", loop.State{Loop: 4, Ask: loop.Ask{Loop: 3, Questions: []string{"Which?"}}}, 5, "Bash(x): allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withKeptAnswer(tc.st, []string{"May I run Bash(x)?"}, "Bash(x): allowed")
			if got.Ask.Loop != tc.wantLoop || got.Ask.Answer != tc.want || got.Ask.Waiting() {
				t.Errorf("ask %+v", got.Ask)
			}
			if q := strings.Join(got.Ask.Questions, "|"); !strings.HasSuffix(q, "May I run Bash(x)?") {
				t.Errorf("questions %q", q)
			}
			if s := loop.AnswerSection(got.Ask); !strings.Contains(s, "A: "+tc.want) {
				t.Errorf("the prompt's section:\n%s", s)
			}
		})
	}
}

// startDaemon runs a daemon on home whose loops are calls that wait (the
// callRunner); stop ends it as a restart would.
func startDaemon(t *testing.T, home Home, runner *callRunner) (d *Daemon, stop func()) {
	t.Helper()
	build := func(string, io.Writer) (loop.Spec, []agent.Adapter, error) { return loop.Spec{}, nil, nil }
	d, err := Open(Options{Home: home, Runner: runner, MaxParallel: 1, Build: build})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { d.Run(ctx); close(ran) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-ran; d.Close() }) }
	t.Cleanup(stop)
	return d, stop
}

// Kept approvals after a restart: the task lists them, a decision on one
// leaves the other waiting, the last queues the task, whose loop starts
// with the decisions as its next call's answer, the agent session that
// asked to resume, and the decisions for its receipt. Decided all before
// a restart could queue the task, the next daemon queues it.
func TestKeptApprovalsAfterARestart(t *testing.T) {
	home := Home(t.TempDir())
	runner := &callRunner{started: make(chan string, 4)}
	d, stop := startDaemon(t, home, runner)
	cli := fleet.Who{Surface: fleet.SurfaceCLI, User: "alice"}
	if err := d.db.PutSession(Session{Name: "a", Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []fleet.Command{{Verb: fleet.Start, Session: "a", Title: "Task", Who: cli}, {Verb: fleet.Loop, Session: "a", MaxLoops: 3, Who: cli}} {
		if _, err := d.Do(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	<-runner.started
	task, err := d.db.CurrentTask("a")
	if err != nil {
		t.Fatal(err)
	}
	// What a call that waited left when its daemon died (its loop then
	// ends with the daemon's stop and leaves the task as it is).
	task.State, task.Message = fleet.Waiting, "waiting: approval a2 for Write(x.txt)"
	for _, k := range []keptItem{
		{Item: "a1", What: "Bash(npm test)", Key: "Bash:k1", AgentSession: "sess-1"},
		{Item: "a2", What: "Write(x.txt)", Key: "Write", AgentSession: "sess-1"},
	} {
		if err := d.db.KeepGateItem(task.ID, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.db.UpdateTask(task); err != nil {
		t.Fatal(err)
	}
	stop()

	d, stop = startDaemon(t, home, runner)
	var v TaskView
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// The restarted daemon restores its runners as it starts.
		if v, err = d.Status("a"); err == nil && len(v.Pending) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || v.State != fleet.Waiting || len(v.Pending) != 2 || v.Pending[0].ID != "a1" || v.Pending[1].ID != "a2" {
		t.Fatalf("after the restart: %+v %v", v, err)
	}
	ctx := context.Background()
	if v, err = d.Do(ctx, fleet.Command{Verb: fleet.Approve, Session: "a", Item: "a1", ForTask: true, Who: cli}); err != nil {
		t.Fatal(err)
	}
	if v.State != fleet.Waiting || len(v.Pending) != 1 || v.Message != "waiting: approval a2 for Write(x.txt)" {
		t.Fatalf("one decided: %+v", v)
	}
	if _, err := d.Do(ctx, fleet.Command{Verb: fleet.Approve, Session: "a", Item: "a1", Who: cli}); err == nil {
		t.Error("a1 decided twice")
	}
	if grants, _ := d.db.Grants(task.ID); len(grants) != 1 || grants[0] != "Bash:k1" {
		t.Errorf("grants kept %q", grants)
	}
	if _, err := d.Do(ctx, fleet.Command{Verb: fleet.Deny, Session: "a", Item: "a2", Text: "not there", Who: cli}); err != nil {
		t.Fatal(err)
	}
	if s := <-runner.started; s != "a" {
		t.Fatalf("%s started", s)
	}
	st, _, err := d.db.LoadState("a")
	if err != nil {
		t.Fatal(err)
	}
	if st.Session.ID != "sess-1" || st.Ask.Waiting() ||
		!strings.Contains(st.Ask.Answer, "Bash(npm test): a person (cli:alice) allowed it for the rest of the task") ||
		!strings.Contains(st.Ask.Answer, "Write(x.txt): a person (cli:alice) denied it: not there") {
		t.Errorf("the next call's state: session %q, ask %+v", st.Session.ID, st.Ask)
	}
	if left, _ := d.db.KeptGateItems(task.ID); len(left) != 0 {
		t.Errorf("still kept: %+v", left)
	}

	// Decided, but the daemon died before it queued the task.
	task.State = fleet.Waiting
	if err := d.db.UpdateTask(task); err != nil {
		t.Fatal(err)
	}
	if err := d.db.KeepGateItem(task.ID, keptItem{Item: "a3", What: "Bash(ls)"}); err != nil {
		t.Fatal(err)
	}
	if err := d.db.DecideGateItem(task.ID, "a3", keptDecision{Allow: true, Prompt: "Bash(ls): allowed"}); err != nil {
		t.Fatal(err)
	}
	stop()
	d, _ = startDaemon(t, home, runner)
	select {
	case s := <-runner.started:
		if s != "a" {
			t.Fatalf("%s started", s)
		}
	case <-time.After(10 * time.Second):
		v, _ := d.Status("a")
		t.Fatalf("the decided task did not go on: %+v", v)
	}
}
