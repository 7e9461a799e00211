package serve

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// A task's rows keep their replay inputs for `ralph replay`, masked as
// every row is; the views (History, the cache) leave them out. The store
// reads the same opened read-only, as `ralph replay` does without a
// daemon, and an unknown task is NotFound.
func TestDBReplayKeepsWhatViewsLeaveOut(t *testing.T) {
	dir := t.TempDir()
	db := openTestDB(t, dir)
	if err := db.PutSession(Session{Name: "5", Dir: "/src/five"}); err != nil {
		t.Fatal(err)
	}
	tk, err := db.CreateTask(context.Background(), Task{Session: "5", Title: "Do it", Origin: "cli", State: fleet.Running, File: "f", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	secret := "ghp_" + strings.Repeat("a", 36)
	for n := 1; n <= 2; n++ {
		st := loop.State{Version: loop.StateVersion, Loop: n, Breaker: breaker.New(t0)}
		rec := loop.Metrics{Loop: n, Decision: "continue", Replay: &loop.Replay{V: loop.ReplayVersion, Next: "call:claude", Fold: "continue",
			Iteration: loop.Iteration{Loop: n, Observed: loop.Observed{Summary: "pushed with " + secret}}}}
		if err := db.SaveState("5", tk.ID, st, &rec); err != nil {
			t.Fatal(err)
		}
		// Read from the store after the first, from the cache after the
		// second.
		if h, err := db.recentHistory("5", tk.ID); err != nil || len(h) != n || h[n-1].Replay != nil {
			t.Fatalf("the view's history carries replay inputs: %v %+v", err, h)
		}
	}
	check := func(how string, r TaskReplay, err error) {
		t.Helper()
		if err != nil || r.Task != tk.ID || r.Session != "5" || len(r.Records) != 2 || r.Records[0].Loop != 1 {
			t.Fatalf("%s: %v %+v", how, err, r)
		}
		var m loop.Metrics
		if err := json.Unmarshal(r.Records[1].Record, &m); err != nil || m.Replay == nil || m.Replay.Next != "call:claude" {
			t.Fatalf("%s: row %s: %v", how, r.Records[1].Record, err)
		}
		if strings.Contains(string(r.Records[1].Record), secret) {
			t.Errorf("%s: a secret in the row: %s", how, r.Records[1].Record)
		}
	}
	r, err := db.Replay(tk.ID)
	check("the daemon's store", r, err)
	r, err = ReadReplay(Home(dir), tk.ID)
	check("read-only", r, err)
	var fe *fleet.Error
	if _, err := db.Replay("t99"); !errors.As(err, &fe) || fe.Code != fleet.NotFound {
		t.Errorf("an unknown task: %v", err)
	}
	if _, err := ReadReplay(Home(t.TempDir()), tk.ID); err == nil || !strings.Contains(err.Error(), "the daemon's store") {
		t.Errorf("no store: %v", err)
	}
}
