package serve

import (
	"context"
	"testing"

	"ralph/internal/fleet"
)

// The gauges read the store: tasks by state, every task the store keeps;
// one pending notice per channel that has yet to deliver it.
func TestMetricsStore(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	s := metricsStore{db}
	if c, err := s.TaskCounts(); err != nil || len(c) != 0 {
		t.Fatalf("an empty store: %v %v", c, err)
	}
	ctx := context.Background()
	for i, st := range []fleet.State{fleet.Done, fleet.Done, fleet.Running, fleet.Halted} {
		if _, err := db.CreateTask(ctx, Task{Session: string(rune('a' + i)), Title: "x", Origin: "cli", State: st, File: "f", CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.TaskCounts()
	if err != nil || c["done"] != 2 || c["running"] != 1 || c["halted"] != 1 || len(c) != 3 {
		t.Errorf("counts %v %v", c, err)
	}
	for _, n := range []*Notice{{TaskID: "t1", Kind: NoticeDone}, {TaskID: "t2", Kind: NoticeDone}} {
		if err := db.AddNotice(n, []string{"log", "telegram"}, t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.noticeDelivered(1, "log", t0); err != nil {
		t.Fatal(err)
	}
	if n, err := s.OutboxPending(); err != nil || n != 3 {
		t.Errorf("pending %d %v, want 3", n, err)
	}
}
