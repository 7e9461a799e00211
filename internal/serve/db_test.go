package serve

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func openTestDB(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := OpenDB(filepath.Join(dir, "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// State and record go in together; the store reopens with both, a record
// saved twice is one row, and old records are pruned.
func TestDBStateAndRecordTogether(t *testing.T) {
	dir := t.TempDir()
	db := openTestDB(t, dir)
	if err := db.PutSession(Session{Name: "5", Dir: "/src/five"}); err != nil {
		t.Fatal(err)
	}
	if _, found, err := db.LoadState("5"); err != nil || found {
		t.Fatalf("fresh session: found %v, %v", found, err)
	}
	if err := db.SaveState("9", "t1", loop.State{}, nil); err == nil {
		t.Error("saved the state of an unknown session")
	}
	tk, err := db.CreateTask(context.Background(), Task{Session: "5", Title: "Do it", Origin: "cli", State: fleet.Waiting, File: "f", CreatedAt: t0})
	if err != nil || tk.ID != "t1" {
		t.Fatalf("create: %v %+v", err, tk)
	}
	for n := 1; n <= 3; n++ {
		st := loop.State{Version: loop.StateVersion, Loop: n, Breaker: breaker.New(t0)}
		rec := loop.Metrics{Loop: n, FilesChanged: n, StatusBlock: map[string]string{"STATUS": "IN_PROGRESS"}}
		if err := db.SaveState("5", tk.ID, st, &rec); err != nil {
			t.Fatal(err)
		}
	}
	// Saved again (a retry after a crash between save and anything else).
	if err := db.SaveState("5", tk.ID, loop.State{Version: loop.StateVersion, Loop: 3, Breaker: breaker.New(t0)}, &loop.Metrics{Loop: 3, FilesChanged: 3}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = openTestDB(t, dir)
	st, found, err := db.LoadState("5")
	if err != nil || !found || st.Loop != 3 {
		t.Fatalf("reopened: %v %v loop %d", err, found, st.Loop)
	}
	h, err := db.History(tk.Session, tk.ID, 5)
	if err != nil || len(h) != 3 || h[0].Loop != 1 || h[2].Loop != 3 || h[0].StatusBlock["STATUS"] != "IN_PROGRESS" {
		t.Fatalf("history %v %+v", err, h)
	}
	for n := 4; n <= historyKeep+10; n++ {
		if err := db.SaveState("5", tk.ID, loop.State{Version: loop.StateVersion, Loop: n}, &loop.Metrics{Loop: n}); err != nil {
			t.Fatal(err)
		}
	}
	if h, _ := db.History(tk.Session, tk.ID, 1000); len(h) != historyKeep {
		t.Errorf("kept %d records, want %d", len(h), historyKeep)
	}
}

func TestDBTasks(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	ctx := context.Background()
	for _, s := range []string{"a", "b"} {
		db.PutSession(Session{Name: s, Dir: "/" + s})
	}
	t1, _ := db.CreateTask(ctx, Task{Session: "a", Title: "one", Origin: "cli", State: fleet.Running, File: "x", CreatedAt: t0})
	t2, _ := db.CreateTask(ctx, Task{Session: "b", Title: "two", Origin: "cli", State: fleet.Queued, File: "y", CreatedAt: t0})
	t1.State, t1.Questions, t1.ExitReason, t1.Loops = fleet.Done, []string{"why?"}, "plan_complete", 7
	if err := db.UpdateTask(t1); err != nil {
		t.Fatal(err)
	}
	t3, _ := db.CreateTask(ctx, Task{Session: "a", Title: "three", Origin: "cli", State: fleet.Running, File: "z", CreatedAt: t0})
	cur, err := db.CurrentTasks()
	if err != nil || len(cur) != 2 || cur[0].ID != t2.ID || cur[1].ID != t3.ID {
		t.Fatalf("current tasks %v %+v", err, cur)
	}
	got, _ := db.Task(t1.ID)
	if got.State != fleet.Done || got.Loops != 7 || got.Questions[0] != "why?" || got.ExitReason != "plan_complete" || !got.CreatedAt.Equal(t0) {
		t.Errorf("task read back %+v", got)
	}
	if _, err := db.CurrentTask("zzz"); err != ErrNoTask {
		t.Errorf("no task: %v", err)
	}
	if n, err := db.Requeue(); err != nil || n != 1 {
		t.Fatalf("requeue %d %v", n, err)
	}
	if got, _ := db.Task(t3.ID); got.State != fleet.Queued {
		t.Errorf("running task after requeue: %s", got.State)
	}
	if err := db.SetAgentGroup("a", 4242, 99); err != nil {
		t.Fatal(err)
	}
	if g, err := db.AgentGroups(); err != nil || len(g) != 1 || g[0] != (AgentGroup{"a", 4242, 99}) {
		t.Errorf("agent groups %v %+v", err, g)
	}
	db.SetAgentGroup("a", 0, 0)
	if g, _ := db.AgentGroups(); len(g) != 0 {
		t.Errorf("after clearing: %+v", g)
	}
	sess, _ := db.Sessions()
	if len(sess) != 2 || sess[0].Name != "a" {
		t.Errorf("sessions %+v", sess)
	}
}

// The in-memory view of a session's progress and recent history is what
// the store holds after every kind of save: new iterations, a record saved
// twice, a state without a record, a new task, a cold cache.
func TestDBViewCacheMatchesTheStore(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	if err := db.PutSession(Session{Name: "5", Dir: "/src/five"}); err != nil {
		t.Fatal(err)
	}
	check := func(step, taskID string) {
		t.Helper()
		cached, err := db.recentHistory("5", taskID)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := db.History("5", taskID, historyShown)
		if err != nil {
			t.Fatal(err)
		}
		if len(cached) != len(stored) {
			t.Fatalf("%s: cached %d iterations, stored %d", step, len(cached), len(stored))
		}
		for i := range stored {
			if cached[i].Loop != stored[i].Loop || cached[i].FilesChanged != stored[i].FilesChanged {
				t.Errorf("%s: iteration %d cached %+v, stored %+v", step, i, cached[i], stored[i])
			}
		}
		p, err := db.progress("5")
		st, found, _ := db.LoadState("5")
		if err != nil || !reflect.DeepEqual(p, progressOf(st, found)) {
			t.Errorf("%s: cached progress %+v, stored %+v", step, p, progressOf(st, found))
		}
	}
	save := func(taskID string, n, files int, withRec bool) {
		t.Helper()
		st := loop.State{Version: loop.StateVersion, Loop: n, Breaker: breaker.New(t0)}
		st.Breaker.NoProgress = n
		var rec *loop.Metrics
		if withRec {
			rec = &loop.Metrics{Loop: n, FilesChanged: files}
		}
		if err := db.SaveState("5", taskID, st, rec); err != nil {
			t.Fatal(err)
		}
	}
	check("before any loop", "t1")
	for n := 1; n <= 7; n++ {
		save("t1", n, n, true)
		check(fmt.Sprintf("after loop %d", n), "t1")
	}
	save("t1", 7, 70, true)
	check("loop 7 saved again", "t1")
	save("t1", 7, 0, false)
	check("state without a record", "t1")
	save("t2", 8, 8, true)
	check("first loop of the next task", "t2")
	check("the earlier task", "t1")
	save("t2", 9, 9, true)
	check("second loop of the next task", "t2")

	// A read that began before a save must not put back the older value.
	old, _, gen := db.cache.getProgress("5")
	save("t2", 10, 10, true)
	db.cache.setProgress("5", old, gen)
	check("after a stale read", "t2")
}

// A store made before loops were numbered per task keeps its iterations
// under the new key, and two tasks' loop 1 can both be stored.
func TestOldIterationsAreRekeyed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ralph.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE iterations (session TEXT NOT NULL, loop INTEGER NOT NULL, task_id TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (session, loop))`,
		`INSERT INTO iterations VALUES ('a', 7, 't1', '{"loop":7}')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.db.QueryRow(`SELECT count(*) FROM iterations WHERE session = 'a' AND task_id = 't1' AND loop = 7`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the old row after the rekey: %d, %v", n, err)
	}
	for _, task := range []string{"t1", "t2"} {
		if _, err := db.db.Exec(`INSERT INTO iterations VALUES ('a', 1, ?, '{}')`, task); err != nil {
			t.Errorf("loop 1 of %s: %v", task, err)
		}
	}
}
