package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/fleet"
	"ralph/internal/gate"
	"ralph/internal/loop"
)

// "Allow for this task" on a call with nothing exact to allow (a Bash call
// without its command) allows it once and grants nothing: the next such
// call asks again, and the receipt says so. A deny for the task is refused.
func TestAllowForTaskGrantsOnlyWhatIsExact(t *testing.T) {
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
	cli := fleet.Who{Surface: fleet.SurfaceCLI, User: "alice"}
	if err := d.db.PutSession(Session{Name: "a", Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []fleet.Command{{Verb: fleet.Start, Session: "a", Title: "Task", Who: cli}, {Verb: fleet.Loop, Session: "a", MaxLoops: 3, Who: cli}} {
		if _, err := d.Do(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	<-runner.started
	g := &taskGate{d: d, session: "a"}
	noCommand := gate.Approval{Tool: "Bash", Input: json.RawMessage(`{"description":"no command"}`)}
	decide := func(item string, forTask bool, a gate.Approval) gate.Decision {
		t.Helper()
		got := make(chan gate.Decision, 1)
		go func() {
			dec, _ := g.Approve(ctx, a)
			got <- dec
		}()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if v, _ := d.Status("a"); len(v.Pending) == 1 && v.Pending[0].ID == item {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is not pending", item)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := d.Do(ctx, fleet.Command{Verb: fleet.Approve, Session: "a", Item: item, ForTask: forTask, Who: cli}); err != nil {
			t.Fatal(err)
		}
		return <-got
	}
	if dec := decide("a1", true, noCommand); !dec.Allow {
		t.Fatalf("a1: %+v", dec)
	}
	// Asked again: nothing was granted.
	if dec := decide("a2", false, noCommand); !dec.Allow {
		t.Fatalf("a2: %+v", dec)
	}
	got := g.take()
	if len(got) != 2 || !strings.HasPrefix(got[0].Outcome, "allowed once (nothing exact") || got[0].Surface != "cli" || got[0].User != "alice" ||
		got[1].Outcome != "allowed once" || got[1].Item != "a2" {
		t.Errorf("the receipt's decisions: %+v", got)
	}
	if len(g.take()) != 0 {
		t.Error("take keeps what it gave")
	}
	_, err = d.Do(ctx, fleet.Command{Verb: fleet.Deny, Session: "a", Item: "a3", ForTask: true, Who: cli})
	var fe *fleet.Error
	if err == nil || !strings.Contains(err.Error(), "for_task") || !errors.As(err, &fe) || fe.Code != fleet.Invalid {
		t.Errorf("a deny for the task: %v", err)
	}
}
