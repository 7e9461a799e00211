package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// benchDaemon is a daemon holding n tasks, each with 5 iterations saved.
func benchDaemon(b testing.TB, n int) (*Daemon, http.Handler) {
	b.Helper()
	d, err := Open(Options{Home: Home(b.TempDir())})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	for i := range n {
		name := fmt.Sprintf("s%03d", i)
		if err := d.db.PutSession(Session{Name: name, Dir: "/src/" + name}); err != nil {
			b.Fatal(err)
		}
		t, err := d.db.CreateTask(context.Background(), Task{Session: name, Title: "Task " + name, Origin: "cli", State: fleet.Running, File: "f", CreatedAt: t0})
		if err != nil {
			b.Fatal(err)
		}
		for l := 1; l <= 5; l++ {
			st := loop.State{Version: loop.StateVersion, Loop: l, Breaker: breaker.New(t0)}
			rec := loop.Metrics{Loop: l, FilesChanged: 2, StatusBlock: map[string]string{"STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "TASKS_REMAINING": "3"}}
			if err := d.db.SaveState(name, t.ID, st, &rec); err != nil {
				b.Fatal(err)
			}
		}
	}
	return d, d.Handler("token")
}

func serveBench(b *testing.B, h http.Handler, path string) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer token")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
	}
}

// The list a dashboard polls, with 200 tasks: from memory after the first
// request (the daemon is the store's only writer).
func BenchmarkAPIList200(b *testing.B) {
	_, h := benchDaemon(b, 200)
	serveBench(b, h, "/api/tasks")
}

// One task's status, with 200 in the store.
func BenchmarkAPIStatus200(b *testing.B) {
	_, h := benchDaemon(b, 200)
	serveBench(b, h, "/api/tasks/s100")
}

// A restart's work before it serves: opening a store of 200 tasks and
// requeueing what was running.
func BenchmarkOpen200(b *testing.B) {
	d, _ := benchDaemon(b, 200)
	home := d.opts.Home
	d.Close()
	for b.Loop() {
		d, err := Open(Options{Home: home})
		if err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}

// The list under load: between two requests, 20 of the 200 loops show a
// new status (about what 200 running loops do in the tenth of a second
// between a dashboard's polls). Only those tasks' views are rendered again.
func BenchmarkAPIList200Busy(b *testing.B) { benchBusyList(b, false) }

// The same, with the views the loops moved rendered by the keeper between
// two requests, as it does while someone reads the list: what is left for
// the request itself.
func BenchmarkAPIList200BusyKept(b *testing.B) { benchBusyList(b, true) }

func benchBusyList(b *testing.B, kept bool) {
	d, h := benchDaemon(b, 200)
	d.list.keeping.Store(kept)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for range 20 {
			i++
			d.hold(fmt.Sprintf("s%03d", i%200), fmt.Sprintf("held %d", i), loop.WaitResources, t0)
		}
		if kept {
			b.StopTimer()
			if _, err := d.listed(true); err != nil { // the keeper's work
				b.Fatal(err)
			}
			b.StartTimer()
		}
		req := httptest.NewRequest("GET", "/api/tasks", nil)
		req.Header.Set("Authorization", "Bearer token")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// What the store and the task file cost one iteration of a loop: its
// agent's group recorded at the start, then the state, record, spend and
// the group's end saved, and the task file brought up to date (the same
// status block as the iteration before, as most iterations report).
func BenchmarkIterationWrites(b *testing.B) {
	d, _ := benchDaemon(b, 1)
	sess := Session{Name: "s000", Dir: "/src/s000"}
	tk, err := d.db.CurrentTask(sess.Name)
	if err != nil {
		b.Fatal(err)
	}
	ws := &workspace{home: d.opts.Home, db: d.db, session: sess, taskID: tk.ID}
	if err := os.MkdirAll(filepath.Dir(ws.FixPlanFile()), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(ws.FixPlanFile(), []byte("# Task\n\n**Status:** TODO\n\n- [ ] one\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	block := map[string]string{"STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "TASKS_REMAINING": "3"}
	l := 5
	for b.Loop() {
		l++
		if err := d.db.SetAgentGroup(sess.Name, 4242, 1); err != nil {
			b.Fatal(err)
		}
		rec := loop.Metrics{Loop: l, StartedAt: t0, FilesChanged: 2, CostUSD: 0.01, InputTokens: 1000, StatusBlock: block}
		if err := ws.SaveState(loop.State{Version: loop.StateVersion, Loop: l, Breaker: breaker.New(t0)}, &rec); err != nil {
			b.Fatal(err)
		}
	}
}
