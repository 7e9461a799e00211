package serve

import (
	"context"
	"testing"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// What GET /api/tasks shows while a keeper renders the views: a task's own
// change at once, a loop's progress within listLag (and as soon as the
// keeper renders it); List, which the dashboard renders its overview from
// once per change, always current.
func TestListShowsProgressWithinTheLag(t *testing.T) {
	d, _ := benchDaemon(t, 3)
	loopOf := func(views []TaskView, session string) int {
		t.Helper()
		for _, v := range views {
			if v.Session == session {
				return v.LoopCount
			}
		}
		t.Fatalf("no task for %s in %+v", session, views)
		return 0
	}
	read := func() []TaskView {
		t.Helper()
		es, err := d.readList()
		if err != nil {
			t.Fatal(err)
		}
		vs := make([]TaskView, len(es))
		for i, e := range es {
			vs[i] = e.view
		}
		return vs
	}
	cur, err := d.db.CurrentTask("s001")
	if err != nil {
		t.Fatal(err)
	}
	save := func(n int) {
		t.Helper()
		st := loop.State{Version: loop.StateVersion, Loop: n, Breaker: breaker.New(t0)}
		if err := d.db.SaveState("s001", cur.ID, st, &loop.Metrics{Loop: n}); err != nil {
			t.Fatal(err)
		}
	}

	// Without a keeper every read is current.
	if got := loopOf(read(), "s001"); got != 5 {
		t.Fatalf("loop %d, want 5", got)
	}
	save(6)
	if got := loopOf(read(), "s001"); got != 6 {
		t.Fatalf("no keeper: loop %d, want 6", got)
	}

	// With one (not rendering here), progress may wait for it...
	d.list.keeping.Store(true)
	save(7)
	if got := loopOf(read(), "s001"); got != 6 {
		t.Fatalf("keeper on it: loop %d, want the view rendered at 6", got)
	}
	// ...but never in List,
	vs, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	if got := loopOf(vs, "s001"); got != 7 {
		t.Fatalf("List: loop %d, want 7", got)
	}
	// nor longer than listLag,
	save(8)
	d.list.mu.Lock()
	for id, e := range d.list.entries {
		e.at = e.at.Add(-listLag)
		d.list.entries[id] = e
	}
	d.list.mu.Unlock()
	if got := loopOf(read(), "s001"); got != 8 {
		t.Fatalf("past the lag: loop %d, want 8", got)
	}
	// and a change of the task itself shows at once.
	save(9)
	cur.State, cur.Message = fleet.Waiting, "waiting for review"
	if err := d.db.UpdateTask(cur); err != nil {
		t.Fatal(err)
	}
	for _, v := range read() {
		if v.Session == "s001" && (v.State != fleet.Waiting || v.LoopCount != 9) {
			t.Fatalf("the task's change: %s loop %d, want waiting at 9", v.State, v.LoopCount)
		}
	}
}

// The keeper renders a moved view by itself while the list is read.
func TestListKeeperRendersChanges(t *testing.T) {
	d, _ := benchDaemon(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.keepList(ctx)
	}()
	defer func() { cancel(); <-done }()
	if _, err := d.readList(); err != nil {
		t.Fatal(err)
	}
	cur, _ := d.db.CurrentTask("s002")
	st := loop.State{Version: loop.StateVersion, Loop: 6, Breaker: breaker.New(t0)}
	if err := d.db.SaveState("s002", cur.ID, st, &loop.Metrics{Loop: 6}); err != nil {
		t.Fatal(err)
	}
	gens := d.db.cache.generations([]string{"s002"})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		d.list.mu.Lock()
		e := d.list.entries[cur.ID]
		d.list.mu.Unlock()
		if e.gen == gens[0] {
			if e.view.LoopCount != 6 {
				t.Fatalf("keeper rendered loop %d, want 6", e.view.LoopCount)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the keeper did not render the moved view")
		}
	}
}
