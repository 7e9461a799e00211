package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/ratelimit"
	"ralph/internal/stop"
	"ralph/internal/store"
)

// countingStore counts the loops saving at once.
type countingStore struct {
	*store.Store
	now, most *atomic.Int32
}

func (s countingStore) SaveState(st loop.State, rec *loop.Metrics) error {
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond) // long enough for loops to overlap
	return s.Store.SaveState(st, rec)
}

// gatedAgent answers each call once its channel lets it (nil: at once).
type gatedAgent struct {
	instantAgent
	release chan struct{}
	started chan struct{}
}

func (a gatedAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	if a.started != nil {
		a.started <- struct{}{}
	}
	if a.release != nil {
		select {
		case <-a.release:
		case <-ctx.Done():
			return agent.Result{Interrupted: true}, nil
		}
	}
	return a.instantAgent.Run(ctx, inv)
}

func turnEngine(t *testing.T, turns *Turns, ad agent.Adapter, loops int, now, most *atomic.Int32) *Engine {
	t.Helper()
	st, err := store.Open(project(t, openPlanMD))
	if err != nil {
		t.Fatal(err)
	}
	spec := loop.Spec{OutputFormat: "json", Policy: loop.Policy{Budget: stop.Budget{MaxLoops: loops},
		Breaker: breaker.DefaultThresholds(), Limits: ratelimit.Limits{MaxCallsPerHour: 1000}}}
	return New(spec, Deps{Agents: []agent.Adapter{ad}, Store: countingStore{st, now, most}, Turns: turns,
		Sleep: func(context.Context, time.Duration) error { return nil }})
}

// Loops sharing one turn never do their own work at once, and all finish.
func TestTurnsBoundTheLoopsWorkingAtOnce(t *testing.T) {
	for _, c := range []struct {
		turns *Turns
		most  int32
	}{{NewTurns(1), 1}, {NewTurns(2), 2}} {
		var now, most atomic.Int32
		out := result("Step."+block("IN_PROGRESS", false, "PASSING"), "")
		var wg sync.WaitGroup
		for range 6 {
			e := turnEngine(t, c.turns, instantAgent{out: out}, 2, &now, &most)
			wg.Go(func() {
				res, err := e.Run(context.Background())
				if err != nil || res.Loops != 2 {
					t.Errorf("a loop ended after %d calls: %v", res.Loops, err)
				}
			})
		}
		wg.Wait()
		if got := most.Load(); got > c.most {
			t.Errorf("with %d turns, %d loops saved at once", c.most, got)
		}
	}
}

// A loop whose agent is working holds no turn: with one turn, another loop
// runs to its end meanwhile; and a loop waiting for a turn leaves when its
// run is stopped.
func TestTurnsAreNotHeldThroughTheCall(t *testing.T) {
	var now, most atomic.Int32
	turns := NewTurns(1)
	out := result("Step."+block("IN_PROGRESS", false, "PASSING"), "")
	slow := gatedAgent{instantAgent: instantAgent{out: out}, release: make(chan struct{}), started: make(chan struct{}, 1)}
	a := turnEngine(t, turns, slow, 1, &now, &most)
	done := runAsync(a, context.Background())
	<-slow.started
	b := turnEngine(t, turns, instantAgent{out: out}, 2, &now, &most)
	res := await(t, runAsync(b, context.Background()), 20*time.Second, "a loop waited for the turn of one whose agent was working")
	if res.Loops != 2 {
		t.Errorf("the other loop made %d calls, want 2", res.Loops)
	}
	close(slow.release)
	if res := <-done; res.Loops != 1 {
		t.Errorf("the slow loop made %d calls, want 1", res.Loops)
	}

	// Holding the only turn by hand: a loop started now waits, and leaves
	// when stopped.
	turns.c <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	c := turnEngine(t, turns, instantAgent{out: out}, 3, &now, &most)
	left := runAsync(c, ctx)
	time.Sleep(50 * time.Millisecond)
	select {
	case res := <-left:
		t.Fatalf("a loop ran without a turn: %+v", res)
	default:
	}
	cancel()
	if res := await(t, left, 10*time.Second, "a loop waiting for a turn did not leave when stopped"); res.Loops != 0 {
		t.Errorf("made %d calls without a turn", res.Loops)
	}
}

// runAsync runs e, its result to come on the channel.
func runAsync(e *Engine, ctx context.Context) <-chan Result {
	c := make(chan Result, 1)
	go func() { res, _ := e.Run(ctx); c <- res }()
	return c
}

// await is the result on c, or the test's failure after d.
func await(t *testing.T, c <-chan Result, d time.Duration, failure string) Result {
	t.Helper()
	select {
	case res := <-c:
		return res
	case <-time.After(d):
		t.Fatal(failure)
		return Result{}
	}
}
