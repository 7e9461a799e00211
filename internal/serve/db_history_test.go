package serve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// historyDaemon is a daemon whose clock is now, with sessions a and b and
// tasks made by mk.
func historyDaemon(t *testing.T, now time.Time, days int) *Daemon {
	t.Helper()
	d, err := Open(Options{Home: Home(t.TempDir()), Now: func() time.Time { return now }, HistoryDays: days})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	for _, s := range []string{"a", "b"} {
		if err := d.db.PutSession(Session{Name: s, Dir: "/src/" + s}); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// addTask stores a task in state, last changed at updated, with one
// iteration and one command, and an archived file for a finished one.
func addTask(t *testing.T, d *Daemon, session, origin string, state fleet.State, updated time.Time) Task {
	t.Helper()
	file := filepath.Join(string(d.opts.Home), "handoffs", session+"-"+string(state)+"-"+updated.Format("0102150405")+".md")
	if err := os.WriteFile(file, []byte("# task\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tk, err := d.db.CreateTask(context.Background(), Task{Session: session, Title: "work " + string(state), Origin: origin,
		State: fleet.Waiting, File: file, CreatedAt: updated.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	tk.State, tk.UpdatedAt = state, updated
	if err := d.db.UpdateTask(tk); err != nil {
		t.Fatal(err)
	}
	if err := d.db.SaveState(session, tk.ID, loop.State{Version: loop.StateVersion, Loop: int(tk.Seq)}, &loop.Metrics{Loop: int(tk.Seq), CostUSD: 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := d.db.AddCommand(tk.ID, updated, fleet.Command{Verb: fleet.Loop, Who: fleet.Who{Surface: fleet.SurfaceWeb}}); err != nil {
		t.Fatal(err)
	}
	return tk
}

func ids(ts []Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// Finished tasks older than HISTORY_DAYS go, with their iterations,
// commands and archived files; a task still open, a recent one, and a
// session's latest stay, whatever their age.
func TestPruneHistory(t *testing.T) {
	now := t0.Add(100 * 24 * time.Hour)
	d := historyDaemon(t, now, 30)
	old := now.Add(-31 * 24 * time.Hour)
	oldDone := addTask(t, d, "a", "cli", fleet.Done, old)                // t1: goes
	oldCancelled := addTask(t, d, "a", "api", fleet.Cancelled, old)      // t2: goes
	oldHalted := addTask(t, d, "a", "github", fleet.Halted, old)         // t3: not finished, stays
	recent := addTask(t, d, "a", "cli", fleet.Done, now.Add(-time.Hour)) // t4: recent, stays
	latest := addTask(t, d, "b", "slack", fleet.Done, old)               // t5: b's latest, stays

	d.prune(d.opts.HistoryDays)

	all, err := d.db.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(all), []string{oldHalted.ID, recent.ID, latest.ID}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	for _, gone := range []Task{oldDone, oldCancelled} {
		if h, _ := d.db.History(gone.Session, gone.ID, 10); len(h) != 0 {
			t.Errorf("%s: %d iterations left", gone.ID, len(h))
		}
		if c, _ := d.db.Commands(gone.ID, 10); len(c) != 0 {
			t.Errorf("%s: %d commands left", gone.ID, len(c))
		}
		if _, err := os.Stat(gone.File); !os.IsNotExist(err) {
			t.Errorf("%s: its file is left (%v)", gone.ID, err)
		}
		if _, err := d.Show(gone.ID); err == nil || !strings.Contains(err.Error(), "HISTORY_DAYS") {
			t.Errorf("show %s after the prune: %v", gone.ID, err)
		}
	}
	for _, kept := range []Task{oldHalted, recent, latest} {
		if h, _ := d.db.History(kept.Session, kept.ID, 10); len(h) != 1 {
			t.Errorf("%s: %d iterations, want 1", kept.ID, len(h))
		}
		if _, err := os.Stat(kept.File); err != nil {
			t.Errorf("%s: %v", kept.ID, err)
		}
	}

	// 0 days keeps every task.
	d2 := historyDaemon(t, now, 0)
	addTask(t, d2, "a", "cli", fleet.Done, old)
	addTask(t, d2, "a", "cli", fleet.Done, old)
	d2.prune(d2.opts.HistoryDays)
	if all, _ := d2.db.Tasks(); len(all) != 2 {
		t.Errorf("HISTORY_DAYS=0 kept %d of 2 tasks", len(all))
	}
}

// The daemon prunes by itself: once at its start, then periodically.
func TestPruneLoop(t *testing.T) {
	now := t0.Add(100 * 24 * time.Hour)
	d := historyDaemon(t, now, 7)
	addTask(t, d, "a", "cli", fleet.Done, now.Add(-8*24*time.Hour))
	addTask(t, d, "a", "cli", fleet.Done, now.Add(-time.Hour))
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() { d.pruneLoop(done, 10*time.Millisecond); close(ended) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		all, _ := d.db.Tasks()
		if len(all) == 1 && all[0].ID == "t2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never pruned: %v", ids(all))
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A task that ages past the limit later goes at the next tick.
	old := addTask(t, d, "b", "cli", fleet.Done, now.Add(-9*24*time.Hour))
	addTask(t, d, "b", "cli", fleet.Waiting, now)
	for {
		if _, err := d.db.Task(old.ID); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the periodic prune never removed the task")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(done)
	<-ended
}

// The history's filters: session, state, origin, since; newest first.
func TestHistoryFilters(t *testing.T) {
	now := t0.Add(10 * 24 * time.Hour)
	d := historyDaemon(t, now, 30)
	addTask(t, d, "a", "cli", fleet.Done, now.Add(-5*24*time.Hour))      // t1
	addTask(t, d, "a", "github", fleet.Done, now.Add(-2*24*time.Hour))   // t2
	addTask(t, d, "b", "slack", fleet.Cancelled, now.Add(-time.Hour))    // t3
	addTask(t, d, "a", "telegram", fleet.Waiting, now.Add(-time.Minute)) // t4
	since := func(s string) time.Time {
		v, err := ParseSince(s, now)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name string
		f    TaskFilter
		want []string
	}{
		{"all", TaskFilter{}, []string{"t4", "t3", "t2", "t1"}},
		{"session", TaskFilter{Session: "a"}, []string{"t4", "t2", "t1"}},
		{"state", TaskFilter{State: fleet.Done}, []string{"t2", "t1"}},
		{"origin", TaskFilter{Origin: "slack"}, []string{"t3"}},
		{"since 3d", TaskFilter{Since: since("3d")}, []string{"t4", "t3", "t2"}},
		{"since 2h", TaskFilter{Since: since("2h")}, []string{"t4", "t3"}},
		{"since a date", TaskFilter{Since: since(now.Add(-3 * 24 * time.Hour).Format(time.DateOnly))}, []string{"t4", "t3", "t2"}},
		{"together", TaskFilter{Session: "a", State: fleet.Done, Since: since("3d")}, []string{"t2"}},
	} {
		vs, err := d.History(c.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range vs {
			got = append(got, v.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A past task's cost is its own iterations'.
	vs, _ := d.History(TaskFilter{Session: "a", State: fleet.Done})
	if len(vs) != 2 || vs[0].CostUSD != 0.5 || vs[0].LoopCount != 0 {
		t.Errorf("past views: %+v", vs)
	}
	counts, err := d.StateCounts()
	if err != nil || counts[fleet.Done] != 2 || counts[fleet.Cancelled] != 1 || counts[fleet.Waiting] != 1 {
		t.Errorf("counts %v %v", counts, err)
	}
	for _, bad := range []string{"yesterday", "-3d", "3x"} {
		if _, err := ParseSince(bad, now); err == nil || !strings.Contains(err.Error(), "since:") {
			t.Errorf("since %q: %v", bad, err)
		}
	}
}

// The questions and answers of a task file, as appendAnswer writes them.
func TestAnswersIn(t *testing.T) {
	data := appendAnswer([]byte("# Task\n\n## Status\nWAITING\n"), []string{"PostgreSQL or SQLite?", "Which port?"}, "SQLite,\non 8080", t0)
	data = appendAnswer(data, []string{"Tests too?"}, "yes", t0.Add(time.Hour))
	got := answersIn(data)
	if len(got) != 2 || got[0].At != "2026-11-25 12:00" || !slices.Equal(got[0].Questions, []string{"PostgreSQL or SQLite?", "Which port?"}) ||
		got[0].Answer != "SQLite,\non 8080" || got[1].Answer != "yes" || got[1].Questions[0] != "Tests too?" {
		t.Errorf("answers %+v", got)
	}
	if got := answersIn([]byte("# Task\n")); got == nil || len(got) != 0 {
		t.Errorf("no answers: %#v", got)
	}
}
