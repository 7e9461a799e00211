package serve

import (
	"context"
	"io"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/engine"
	"ralph/internal/fleet"
	"ralph/internal/gate"
	"ralph/internal/loop"
)

// callRunner runs each loop as one call in progress until its context
// ends, and says which session's loop started.
type callRunner struct{ started chan string }

func (c *callRunner) RunLoop(ctx context.Context, in RunIn) (engine.Result, loop.State, error) {
	c.started <- in.Session
	<-ctx.Done()
	return engine.Result{}, in.State, ctx.Err()
}

// A call that waits inside itself for a person (the gate's ask) shows the
// task waiting but keeps its agent running, and so its slot: the queue's
// next task does not start past --max-parallel; the answer goes back to
// the call.
func TestACallWaitingForAPersonKeepsItsSlot(t *testing.T) {
	runner := &callRunner{started: make(chan string, 4)}
	build := func(string, io.Writer) (loop.Spec, []agent.Adapter, error) { return loop.Spec{}, nil, nil }
	d, err := Open(Options{Home: Home(t.TempDir()), Runner: runner, MaxParallel: 1, Build: build})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { d.Run(ctx); close(ran) }()
	t.Cleanup(func() { cancel(); <-ran })
	cli := fleet.Who{Surface: fleet.SurfaceCLI}
	for _, s := range []string{"a", "b"} {
		if err := d.db.PutSession(Session{Name: s, Dir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Do(ctx, fleet.Command{Verb: fleet.Start, Session: s, Title: "Task on " + s, Who: cli}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Do(ctx, fleet.Command{Verb: fleet.Loop, Session: "a", MaxLoops: 3, Who: cli}); err != nil {
		t.Fatal(err)
	}
	if s := <-runner.started; s != "a" {
		t.Fatalf("%s started", s)
	}
	ask := &inCallAsk{q: gate.Question{Text: "Which database?"}, answer: make(chan string, 1)}
	if _, err := d.send(ctx, "a", func(r *taskRunner) outcome { return outcome{err: r.askInCall(ask)} }); err != nil {
		t.Fatal(err)
	}
	if v, _ := d.Status("a"); v.State != fleet.Waiting || len(v.Questions) == 0 {
		t.Fatalf("a while its call asks: %s %q", v.State, v.Questions)
	}
	if v, err := d.Do(ctx, fleet.Command{Verb: fleet.Loop, Session: "b", MaxLoops: 3, Who: cli}); err != nil || v.State != fleet.Queued {
		t.Fatalf("b's loop: %v %v", v.State, err)
	}
	select {
	case s := <-runner.started:
		t.Fatalf("%s started while a's call, waiting for a person, holds the only slot", s)
	case <-time.After(500 * time.Millisecond):
	}
	if _, err := d.Do(ctx, fleet.Command{Verb: fleet.Answer, Session: "a", Text: "postgres", Who: cli}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ask.answer:
		if got != "postgres" {
			t.Errorf("the call got %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the answer never reached the call")
	}
	if v, _ := d.Status("a"); v.State != fleet.Running {
		t.Errorf("a after the answer: %s", v.State)
	}
}
