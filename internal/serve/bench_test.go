package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// benchDaemon is a daemon holding n tasks, each with 5 iterations saved.
func benchDaemon(b *testing.B, n int) (*Daemon, http.Handler) {
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
