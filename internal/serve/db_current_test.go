package serve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"ralph/internal/fleet"
)

// The current rows kept in memory are what the store holds after every kind
// of task write, in any order: new tasks, updates, updates with a notice,
// a requeue, an update of a session's older task, a failed write.
func TestCurrentRowsMatchTheStore(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	ctx := context.Background()
	sessions := []string{"a", "b", "c"}
	for _, s := range sessions {
		if err := db.PutSession(Session{Name: s, Dir: "/" + s}); err != nil {
			t.Fatal(err)
		}
	}
	stored := func() []Task {
		t.Helper()
		rows, err := db.st.currentTasks.Query()
		if err != nil {
			t.Fatal(err)
		}
		ts, err := scanTasks(rows)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	check := func(step string) {
		t.Helper()
		mem, err := db.CurrentTasks()
		if err != nil {
			t.Fatal(err)
		}
		if want := stored(); !reflect.DeepEqual(mem, want) {
			t.Fatalf("%s: memory\n%+v\nstore\n%+v", step, mem, want)
		}
		for _, s := range sessions {
			m, merr := db.CurrentTask(s)
			var w Task
			for _, x := range stored() {
				if x.Session == s {
					w = x
				}
			}
			if (merr == ErrNoTask) != (w.ID == "") || merr == nil && !reflect.DeepEqual(m, w) {
				t.Fatalf("%s: session %s memory %+v (%v), store %+v", step, s, m, merr, w)
			}
		}
	}
	check("empty")
	rnd := rand.New(rand.NewPCG(7, 9))
	var all []Task
	states := []fleet.State{fleet.Queued, fleet.Running, fleet.Waiting, fleet.Done, fleet.Cancelled}
	for i := range 300 {
		switch op := rnd.IntN(10); {
		case op < 3 || len(all) == 0:
			tk, err := db.CreateTask(ctx, Task{Session: sessions[rnd.IntN(len(sessions))], Title: fmt.Sprintf("task %d", i), Origin: "cli",
				State: fleet.Queued, File: "f", CreatedAt: t0.Add(time.Duration(i) * time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, tk)
		case op < 8:
			k := rnd.IntN(len(all)) // any task, a session's older ones too
			tk := all[k]
			tk.State, tk.Loops, tk.Message = states[rnd.IntN(len(states))], rnd.IntN(50), fmt.Sprintf("step %d", i)
			tk.Questions = nil
			if rnd.IntN(3) == 0 {
				tk.Questions = []string{"which?", fmt.Sprint(i)}
			}
			tk.UpdatedAt = t0.Add(time.Duration(i) * time.Minute).In(time.FixedZone("x", 3600))
			var err error
			if op < 6 {
				err = db.UpdateTask(tk)
			} else {
				err = db.UpdateTaskNotice(tk, &Notice{TaskID: tk.ID, Kind: "state"}, []string{"telegram"}, t0)
			}
			if err != nil {
				t.Fatal(err)
			}
			all[k] = tk
		case op < 9:
			if _, err := db.Requeue(); err != nil {
				t.Fatal(err)
			}
		default:
			// A write that fails leaves memory to be read again.
			err := db.UpdateTaskNotice(all[0], &Notice{TaskID: all[0].ID, Kind: "state"}, []string{"telegram"}, t0)
			_ = err
			bad := all[len(all)-1]
			bad.State = "no such state"
			if err := db.writeTask(func() string { return bad.ID }, func() error { return fmt.Errorf("disk on fire") }); err == nil {
				t.Fatal("a failed write reported no error")
			}
		}
		check(fmt.Sprintf("step %d", i))
	}
}

// A caller may change the questions of what it got without changing what
// the next caller gets.
func TestCurrentRowsAreCopies(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	db.PutSession(Session{Name: "a", Dir: "/a"})
	if _, err := db.CreateTask(context.Background(), Task{Session: "a", Title: "t", Origin: "cli", State: fleet.Queued, Questions: []string{"q1"}, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	got, _ := db.CurrentTask("a")
	got.Questions[0] = "changed"
	again, _ := db.CurrentTask("a")
	if again.Questions[0] != "q1" {
		t.Errorf("memory changed through a copy: %q", again.Questions)
	}
}
