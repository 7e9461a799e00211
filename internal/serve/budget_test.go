package serve

import (
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/budget"
	"ralph/internal/loop"
)

// The daemon's admission: the day's spend from the ledger, the calls it
// admitted and not yet recorded counted in (so two loops never both take
// the last room), a spent budget held until the next day, its warning
// given once, and the next day admitted again.
func TestAdmitUnderADailyBudget(t *testing.T) {
	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	d, err := Open(Options{Home: Home(t.TempDir()), Watch: WatchOptions{Interval: -1}, Now: clock,
		Budget: budget.Config{Limits: budget.Limits{FleetCost: 5}, Zone: time.UTC}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	for _, s := range []string{"a", "b"} {
		if err := d.db.PutSession(Session{Name: s, Dir: "/src/" + s}); err != nil {
			t.Fatal(err)
		}
	}
	record := func(session string, n int, cost float64) {
		t.Helper()
		if err := d.db.SaveState(session, "t-"+session, loop.State{Loop: n}, &loop.Metrics{Loop: n, StartedAt: clock(), CostUSD: cost}); err != nil {
			t.Fatal(err)
		}
	}
	record("a", 1, 1)
	record("a", 2, 1)
	record("b", 1, 1.5)

	if h := d.budgetHold("a"); h == nil || h.Allowance == nil || h.Allowance.CostUSD != 1.5 || h.Allowance.FromCostUSD != 0 {
		t.Fatalf("the allowance of a loop elsewhere: %+v", h)
	}
	first := d.admit("a")
	if !first.Allow || first.MaxCostUSD != 1.5 {
		t.Fatalf("with $3.50 of $5 spent: %+v", first)
	}
	second := d.admit("b")
	if second.Allow || !second.Until.IsZero() || !strings.Contains(second.Message, "fleet cost 3.50/5.00 USD today, 1 call(s) running") {
		t.Fatalf("a call in flight that may spend the rest let another start: %+v", second)
	}
	first.Done()
	first.Done() // once is what counts
	if again := d.admit("b"); !again.Allow {
		t.Fatalf("after the call in flight ended unrecorded: %+v", again)
	} else {
		record("b", 2, 1.5)
		again.Done()
	}
	held := d.admit("a")
	const why = "waiting for budget: fleet cost 5.00/5.00 USD today, until 00:00 UTC"
	if held.Allow || held.Message != why || !held.Until.Equal(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("a spent budget: %+v", held)
	}
	mu.Lock()
	now = now.Add(holdFresh) // a loop elsewhere's reading of the spend is a second old at most
	mu.Unlock()
	if h := d.budgetHold("a"); h == nil || h.Kind != loop.WaitBudget || h.Message != why || h.Allowance != nil {
		t.Fatalf("the hold of a loop elsewhere: %+v", h)
	}
	d.admit("b")
	if r, err := d.Budget(); err != nil || r.Fleet.CostUSD != 5 || r.Fleet.Calls != 4 || len(r.Sessions) != 2 || r.Sessions[1].CostUSD != 3 {
		t.Fatalf("report: %+v %v", r, err)
	}
	var warnings int
	if err := d.db.db.QueryRow(`SELECT COUNT(*) FROM outbox WHERE kind = ?`, NoticeBudget).Scan(&warnings); err != nil {
		t.Fatal(err)
	}
	if warnings != 1 {
		t.Errorf("%d budget warnings in the outbox, want one", warnings)
	}

	mu.Lock()
	now = time.Date(2026, 11, 26, 0, 0, 1, 0, time.UTC)
	mu.Unlock()
	if next := d.admit("a"); !next.Allow || next.MaxCostUSD != 5 {
		t.Fatalf("the next day: %+v", next)
	}
}
