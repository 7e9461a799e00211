package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ralph/internal/activity"
	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// webDaemon is a daemon with one session "a" whose task t1 ran loops 3
// and 4 (the session had run 2 before the task).
func webDaemon(t *testing.T) *Daemon {
	t.Helper()
	d, err := Open(Options{Home: Home(t.TempDir()), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.db.PutSession(Session{Name: "a", Dir: "/src/a"}); err != nil {
		t.Fatal(err)
	}
	old := loop.State{Version: loop.StateVersion, Loop: 2, Breaker: breaker.New(t0)}
	if err := d.db.SaveState("a", "t0", old, &loop.Metrics{Loop: 2, CostUSD: 5, Summary: "an older task"}); err != nil {
		t.Fatal(err)
	}
	tk, err := d.db.CreateTask(context.Background(), Task{Session: "a", Title: "Web", Origin: "cli", State: fleet.Waiting, FirstLoop: 2, File: "f", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	br := breaker.New(t0)
	br.Status, br.TotalOpens = breaker.Open, 1
	br.History = []breaker.Transition{
		{At: t0.Add(-time.Hour), Loop: 1, From: breaker.Closed, To: breaker.Open, Message: "before the task"},
		{At: t0.Add(time.Minute), Loop: 4, From: breaker.Closed, To: breaker.Open, Message: "no progress in 2 loops"},
	}
	for l, rec := range map[int]loop.Metrics{
		3: {Loop: 3, CostUSD: 0.25, InputTokens: 100, OutputTokens: 10, Summary: "made the model"},
		4: {Loop: 4, CostUSD: 0.5, InputTokens: 200, OutputTokens: 20, Summary: "key sk-ant-api03-" + strings.Repeat("x", 40)},
	} {
		st := loop.State{Version: loop.StateVersion, Loop: l, Breaker: br}
		if err := d.db.SaveState("a", tk.ID, st, &rec); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func TestWebReads(t *testing.T) {
	d := webDaemon(t)
	u, err := d.Usage()
	if err != nil {
		t.Fatal(err)
	}
	got := u["t1"]
	if got.Iterations != 2 || got.CostUSD != 0.75 || got.InputTokens != 300 || got.OutputTokens != 30 {
		t.Errorf("usage: %+v", got)
	}
	if strings.Contains(got.Summary, "xxxxxxxx") || got.Summary == "" {
		t.Errorf("the summary is not masked: %q", got.Summary)
	}
	if u["t0"].Summary != "an older task" {
		t.Errorf("the earlier task's usage: %+v", u["t0"])
	}
	r, err := d.Records("a", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Iterations) != 2 || r.Iterations[0].Loop != 1 || r.Iterations[1].Loop != 2 || strings.Contains(r.Iterations[1].Summary, "xxxxxxxx") {
		t.Errorf("records: %+v", r.Iterations)
	}
	if len(r.Transitions) != 1 || r.Transitions[0].Loop != 2 || r.Transitions[0].To != breaker.Open {
		t.Errorf("transitions: %+v", r.Transitions)
	}
	if _, err := d.Records("a", "t9"); err == nil {
		t.Error("records of a task that is not the session's")
	}
	all, err := d.Iterations()
	if err != nil || len(all) != 3 || all[0].TaskID != "t0" || all[2].Session != "a" {
		t.Errorf("iterations: %v %+v", err, all)
	}
}

// Pause and resume need a running loop; the API names them.
func TestPauseNeedsARunningLoop(t *testing.T) {
	d := webDaemon(t)
	for _, v := range []fleet.Verb{fleet.Pause, fleet.Resume} {
		c := fleet.Command{Verb: v, Session: "a", Who: fleet.Who{Surface: fleet.SurfaceWeb}}
		if _, err := d.Do(context.Background(), c); err == nil || !strings.Contains(err.Error(), "not running") {
			t.Errorf("a waiting task: %v", err)
		}
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/api/tasks/a/pause", nil)
	req.Header.Set("Authorization", "Bearer tok")
	d.Handler("tok").ServeHTTP(rec, req)
	if rec.Code != http.StatusConflict {
		t.Errorf("POST pause: %d %s", rec.Code, rec.Body)
	}
	c := &controller{}
	c.pause("test")
	if r, _ := c.Read(); !r.Pause || r.PauseBy != "test" {
		t.Errorf("paused: %+v", r)
	}
	c.resume()
	if r, _ := c.Read(); r.Pause {
		t.Errorf("resumed: %+v", r)
	}
	if d.PauseRequested("a") {
		t.Error("no loop, yet a pause")
	}
}

// The web handler gets everything but /api/, which keeps the token.
func TestSetWeb(t *testing.T) {
	d := webDaemon(t)
	d.SetWeb(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "web "+r.URL.Path) }))
	h := d.Handler("tok")
	for path, want := range map[string]string{"/": "web /", "/task/a": "web /task/a", "/api/tasks": "missing or wrong token"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}

// Live events reach subscribers, masked.
func TestLiveEventsAreStreamedMasked(t *testing.T) {
	d := webDaemon(t)
	ch, stop := d.Subscribe()
	defer stop()
	secret := "sk-ant-api03-" + strings.Repeat("y", 40)
	d.emit(Task{ID: "t1", Session: "a"}, loop.Event{Type: loop.EventLive, At: t0, Loop: 3,
		Live: &activity.Event{Kind: activity.Tool, Tool: "Bash", Target: "echo " + secret}})
	ev := <-ch
	b := ev.JSON()
	if ev.Type != loop.EventLive || ev.Engine == nil || ev.Engine.Live == nil {
		t.Fatalf("%+v %s", ev, b)
	}
	// Masked once, for every reader: the typed event and its JSON alike.
	if strings.Contains(string(b), secret) || strings.Contains(ev.Engine.Live.Target, secret) || ev.Engine.Live.Tool != "Bash" {
		t.Errorf("live event: %s", b)
	}
}

// The overview's usage of 200 tasks with 5 iterations each, in one query.
func BenchmarkUsage200(b *testing.B) {
	d, _ := benchDaemon(b, 200)
	for b.Loop() {
		if u, err := d.Usage(); err != nil || len(u) != 200 {
			b.Fatal(err, len(u))
		}
	}
}
