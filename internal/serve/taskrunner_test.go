package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"ralph/internal/engine"
	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// gateResumer is a Runner whose Resume of a task blocks until the test
// opens the task's gate (or the daemon's RPC times out): a Temporal
// server that is slow to take a signal.
type gateResumer struct {
	mu      sync.Mutex
	gates   map[string]chan struct{} // by task id; none: Resume returns at once
	entered chan string              // each Resume's task id, as it begins
}

func newGateResumer() *gateResumer {
	return &gateResumer{gates: map[string]chan struct{}{}, entered: make(chan string, 16)}
}

func (g *gateResumer) gate(taskID string) (open func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := make(chan struct{})
	g.gates[taskID] = c
	var once sync.Once
	return func() { once.Do(func() { close(c) }) }
}

func (g *gateResumer) RunLoop(ctx context.Context, in RunIn) (engine.Result, loop.State, error) {
	<-ctx.Done()
	return engine.Result{}, in.State, ctx.Err()
}

func (g *gateResumer) Resume(ctx context.Context, taskID string, maxLoops int, by string) error {
	g.entered <- taskID
	g.mu.Lock()
	c := g.gates[taskID]
	g.mu.Unlock()
	if c == nil {
		return nil
	}
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gateResumer) Forget(ctx context.Context, taskID string) error { return nil }

// runnerDaemon is a daemon (not running loops) whose sessions each have a
// waiting task.
func runnerDaemon(t *testing.T, g *gateResumer, sessions ...string) (*Daemon, map[string]string) {
	t.Helper()
	d, err := Open(Options{Home: Home(t.TempDir()), Runner: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ids := map[string]string{}
	for _, s := range sessions {
		if err := d.db.PutSession(Session{Name: s, Dir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		v, err := d.Do(context.Background(), fleet.Command{Verb: fleet.Start, Session: s, Title: "Task on " + s, Who: fleet.Who{Surface: fleet.SurfaceCLI}})
		if err != nil {
			t.Fatal(err)
		}
		ids[s] = v.ID
	}
	return d, ids
}

// within runs f and fails the test if it takes longer than limit.
func within(t *testing.T, what string, limit time.Duration, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(limit):
		t.Errorf("%s took more than %v: it waited for another task's RPC", what, limit)
		<-done
		t.Logf("%s answered after %v", what, time.Since(start).Round(time.Millisecond))
	}
}

// A Temporal RPC that hangs on one task's command delays neither a command
// on another task nor the API's reads.
func TestSlowResumeDelaysOnlyItsTask(t *testing.T) {
	g := newGateResumer()
	d, ids := runnerDaemon(t, g, "a", "b")
	open := g.gate(ids["a"])
	defer open()
	cli := fleet.Who{Surface: fleet.SurfaceCLI}
	loopA := make(chan error, 1)
	go func() {
		_, err := d.Do(context.Background(), fleet.Command{Verb: fleet.Loop, Session: "a", MaxLoops: 3, Who: cli})
		loopA <- err
	}()
	select {
	case <-g.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("a's loop never reached the Resumer")
	}
	h := d.Handler("tok")
	get := func(path string) error {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer tok")
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return nil
	}
	const prompt = 500 * time.Millisecond
	within(t, "GET /api/tasks", prompt, func() error { return get("/api/tasks") })
	within(t, "GET /api/tasks/a", prompt, func() error { return get("/api/tasks/a") })
	within(t, "reset of b", prompt, func() error {
		_, err := d.Do(context.Background(), fleet.Command{Verb: fleet.Reset, Session: "b", Who: cli})
		return err
	})
	within(t, "loop of b", prompt, func() error {
		v, err := d.Do(context.Background(), fleet.Command{Verb: fleet.Loop, Session: "b", MaxLoops: 2, Who: cli})
		if err == nil && v.State != fleet.Queued {
			t.Errorf("b after loop: %s", v.State)
		}
		return err
	})
	// a's own next command waits for its RPC; ctx bounds the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := d.Do(ctx, fleet.Command{Verb: fleet.Stop, Session: "a", Who: cli}); err == nil {
		t.Error("a's stop came before a's loop had its answer")
	}
	open()
	if err := <-loopA; err != nil {
		t.Fatalf("loop of a: %v", err)
	}
	if v, _ := d.Status("a"); v.State != fleet.Queued || v.MaxLoops != 3 {
		t.Errorf("a after its loop: %s %d", v.State, v.MaxLoops)
	}
}

// Commands on two tasks run at once: both tasks' RPCs are in flight
// together.
func TestCommandsOnTwoTasksRunAtOnce(t *testing.T) {
	g := newGateResumer()
	d, ids := runnerDaemon(t, g, "a", "b")
	openA, openB := g.gate(ids["a"]), g.gate(ids["b"])
	defer openA()
	defer openB()
	errs := make(chan error, 2)
	for _, s := range []string{"a", "b"} {
		go func() {
			_, err := d.Do(context.Background(), fleet.Command{Verb: fleet.Loop, Session: s, Who: fleet.Who{Surface: fleet.SurfaceCLI}})
			errs <- err
		}()
	}
	in := map[string]bool{}
	for len(in) < 2 {
		select {
		case id := <-g.entered:
			in[id] = true
		case <-time.After(3 * time.Second):
			t.Fatalf("only %v in Resume at once: one task's command waited for the other's", in)
		}
	}
	openA()
	openB()
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// A loop waiting outside the engine (for its tree, for disk space) stops
// as soon as a person asks, not at its next look.
func TestStopWakesAHeldLoop(t *testing.T) {
	d := &Daemon{}
	w := &worker{ctl: &controller{}}
	done := make(chan bool, 1)
	go func() { done <- d.sleepHeld(context.Background(), w, time.Minute) }()
	time.Sleep(50 * time.Millisecond)
	asked := time.Now()
	w.ctl.stop("test")
	select {
	case stopped := <-done:
		if !stopped {
			t.Error("the wait ended, but not as stopped")
		}
		if took := time.Since(asked); took > 200*time.Millisecond {
			t.Errorf("the stop took %v to be heard", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stop was never heard")
	}
	if r, _ := w.ctl.Read(); r.Stop {
		t.Error("the stop request was not used up")
	}
	// A stop asked before the wait ends it at once too.
	w.ctl.stop("test")
	if !d.sleepHeld(context.Background(), w, time.Minute) {
		t.Error("a stop asked before the wait")
	}
}
