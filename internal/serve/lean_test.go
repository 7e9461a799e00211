package serve

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/store"
	"ralph/internal/taskfile"
)

func inode(t testing.TB, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// An iteration that reports what the task file already says leaves the
// file alone (no synced rewrite); a new status rewrites it.
func TestTaskFileRewrittenOnlyWhenChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s-task.md")
	if err := os.WriteFile(path, []byte("# Fix it\n\n**Status:** TODO\n\n- [ ] one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	block := []taskfile.Field{{Key: "STATUS", Value: "IN_PROGRESS"}, {Key: "TASKS_REMAINING", Value: "2"}}
	if err := rewriteTaskFile(path, "IN_PROGRESS", block); err != nil {
		t.Fatal(err)
	}
	first := inode(t, path)
	if err := rewriteTaskFile(path, "IN_PROGRESS", block); err != nil {
		t.Fatal(err)
	}
	if inode(t, path) != first {
		t.Fatal("the same status and block rewrote the task file")
	}
	block[1].Value = "1"
	if err := rewriteTaskFile(path, "IN_PROGRESS", block); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if inode(t, path) == first || !strings.Contains(string(data), "TASKS_REMAINING: 1") {
		t.Fatalf("a new block did not rewrite the task file:\n%s", data)
	}
}

// The list is kept in memory, and follows every change a view shows: a
// saved iteration, a task's new state, a loop's status, a hold, a new task.
func TestListFollowsChanges(t *testing.T) {
	d, h := benchDaemon(t, 3)
	list := func() []TaskView {
		t.Helper()
		req := httptest.NewRequest("GET", "/api/tasks", nil)
		req.Header.Set("Authorization", "Bearer token")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var out []TaskView
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || w.Code != 200 {
			t.Fatalf("%d %s: %v", w.Code, w.Body, err)
		}
		return out
	}
	if v := list(); len(v) != 3 || v[1].LoopCount != 5 {
		t.Fatalf("first list: %+v", v)
	}
	tk, _ := d.db.CurrentTask("s001")
	rec := loop.Metrics{Loop: 6, Summary: "sixth", StatusBlock: map[string]string{"STATUS": "IN_PROGRESS"}}
	if err := d.db.SaveState("s001", tk.ID, loop.State{Version: loop.StateVersion, Loop: 6, Breaker: breaker.New(t0)}, &rec); err != nil {
		t.Fatal(err)
	}
	if v := list(); v[1].LoopCount != 6 || v[1].Summary != "sixth" || len(v[1].History) != historyShown || v[1].History[historyShown-1].Loop != 6 {
		t.Fatalf("after a saved iteration: loop %d, summary %q, %d in history", v[1].LoopCount, v[1].Summary, len(v[1].History))
	}
	tk.State, tk.Message = fleet.Waiting, "a question"
	if err := d.db.UpdateTask(tk); err != nil {
		t.Fatal(err)
	}
	if v := list(); v[1].State != fleet.Waiting || v[1].Message != "a question" {
		t.Fatalf("after the task's change: %s %q", v[1].State, v[1].Message)
	}
	d.hold("s002", "the machine is busy", loop.WaitResources, time.Time{})
	if v := list(); v[2].State != fleet.Waiting || !strings.Contains(v[2].Message, "machine is busy") {
		t.Fatalf("after a hold: %s %q", v[2].State, v[2].Message)
	}
	d.hold("s002", "", "", time.Time{})
	if v := list(); v[2].State != fleet.Running {
		t.Fatalf("after the hold ended: %s", v[2].State)
	}
	if _, err := d.db.CreateTask(context.Background(), Task{Session: "s000", Title: "next", Origin: "cli", State: fleet.Queued, File: "f", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if v := list(); len(v) != 3 || v[2].Title != "next" || v[2].Session != "s000" {
		t.Fatalf("after a new task: %+v", v)
	}
}

func TestSameShown(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	w := func(kind string, until time.Time) *store.Wait {
		return &store.Wait{Kind: kind, Until: until, Reason: "r"}
	}
	for _, c := range []struct {
		name string
		a, b store.Status
		same bool
	}{
		{"only counters moved", store.Status{LastAction: "executing", LoopCount: 1}, store.Status{LastAction: "executing", LoopCount: 2, CallsMadeThisHour: 3}, true},
		{"a new action", store.Status{LastAction: "executing"}, store.Status{LastAction: "waiting"}, false},
		{"a wait began", store.Status{LastAction: "waiting"}, store.Status{LastAction: "waiting", Wait: w("delay", at)}, false},
		{"the same wait", store.Status{Wait: w("delay", at)}, store.Status{Wait: w("delay", at.In(time.FixedZone("x", 3600)))}, true},
		{"a later wait", store.Status{Wait: w("delay", at)}, store.Status{Wait: w("delay", at.Add(time.Second))}, false},
		{"another kind", store.Status{Wait: w("delay", at)}, store.Status{Wait: w("rate_limit", at)}, false},
	} {
		if got := sameShown(c.a, c.b); got != c.same {
			t.Errorf("%s: sameShown = %v", c.name, got)
		}
	}
}
