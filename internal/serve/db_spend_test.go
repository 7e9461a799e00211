package serve

import (
	"fmt"
	"testing"
	"time"

	"ralph/internal/loop"
)

// The ledger sums a day's calls per session and for the fleet from the
// records as they are saved: input and output tokens without the cache's,
// a record saved again once, the day's bound kept, and all of it still
// there when the store is opened again (a restart).
func TestSpendLedger(t *testing.T) {
	dir := t.TempDir()
	db := openTestDB(t, dir)
	for _, s := range []string{"api", "web"} {
		if err := db.PutSession(Session{Name: s, Dir: "/src/" + s}); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	save := func(session, task string, n int, at time.Time, cost float64, in, out, cache int64) {
		t.Helper()
		rec := &loop.Metrics{Loop: n, StartedAt: at.Add(-time.Minute), DurationMS: 60000, CostUSD: cost,
			InputTokens: in, OutputTokens: out, CacheReadTokens: cache, CacheCreationTokens: cache}
		if err := db.SaveState(session, task, loop.State{Loop: n}, rec); err != nil {
			t.Fatal(err)
		}
	}
	save("api", "t1", 1, day.Add(-time.Minute), 5, 100, 10, 9999)   // yesterday: ended before midnight
	save("api", "t1", 2, day.Add(time.Minute), 1.25, 100, 10, 9999) // began yesterday, ended today
	save("api", "t1", 2, day.Add(time.Minute), 1.25, 100, 10, 9999) // saved again
	save("api", "t3", 3, day.Add(time.Hour), 0.5, 200, 20, 0)
	save("web", "t2", 1, day.Add(2*time.Hour), 2, 1000, 100, 0)
	check := func(db *DB) {
		t.Helper()
		s, err := db.Spent(day)
		if err != nil {
			t.Fatal(err)
		}
		api, web := s.Sessions["api"], s.Sessions["web"]
		if api.Calls != 2 || api.CostUSD != 1.75 || api.Tokens != 330 || api.MaxCallCost != 1.25 || api.MaxCallTokens != 220 {
			t.Errorf("api today: %+v", api)
		}
		if web.Calls != 1 || web.CostUSD != 2 || web.Tokens != 1100 {
			t.Errorf("web today: %+v", web)
		}
		if f := s.Fleet; f.Calls != 3 || f.CostUSD != 3.75 || f.Tokens != 1430 || f.MaxCallCost != 2 || f.MaxCallTokens != 1100 {
			t.Errorf("fleet today: %+v", f)
		}
		if s, _ := db.Spent(day.Add(-24 * time.Hour)); s.Fleet.Calls != 4 || s.Fleet.CostUSD != 8.75 {
			t.Errorf("since yesterday: %+v", s.Fleet)
		}
	}
	check(db)
	db.Close()
	check(openTestDB(t, dir))
}

// A store from before the ledger gets one from the records it kept.
func TestSpendBackfilledFromRecords(t *testing.T) {
	dir := t.TempDir()
	db := openTestDB(t, dir)
	rec := `{"loop":4,"started_at":"2026-11-27T10:00:00Z","duration_ms":1000,"cost_usd":0.75,"input_tokens":300,"output_tokens":30,"cache_read_input_tokens":5000}`
	for _, q := range []string{`DROP TABLE spend`, `INSERT INTO iterations(session, loop, task_id, record) VALUES ('api', 4, 't1', '` + rec + `')`} {
		if _, err := db.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db = openTestDB(t, dir)
	s, err := db.Spent(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if api := s.Sessions["api"]; api.Calls != 1 || api.CostUSD != 0.75 || api.Tokens != 330 {
		t.Fatalf("backfilled: %+v", api)
	}
	if s, _ := db.Spent(time.Date(2026, 11, 27, 10, 0, 2, 0, time.UTC)); s.Fleet.Calls != 0 {
		t.Fatalf("the call counts when it ended: %+v", s.Fleet)
	}
}

// A budget's warning is given once a day, whatever asks again.
func TestBudgetWarningOnce(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	for i, want := range []bool{true, false} {
		n := &Notice{Kind: NoticeBudget, Message: "budget: fleet cost 9.60/12.00 USD today (80%)"}
		sent, err := db.warnOnce("fleet cost 2026-11-27", n, []string{"log"}, t0)
		if err != nil || sent != want {
			t.Fatalf("try %d: sent %v, %v", i, sent, err)
		}
	}
	if sent, _ := db.warnOnce("fleet cost 2026-11-28", &Notice{Kind: NoticeBudget}, []string{"log"}, t0); !sent {
		t.Fatal("the next day's warning was not given")
	}
	owed, err := db.pendingNotices("log", 10)
	if err != nil || len(owed) != 2 {
		t.Fatalf("outbox: %v %d", err, len(owed))
	}
}

// BenchmarkSpent is an admission's read of the ledger on a busy day: 5,000
// calls of 50 sessions.
func BenchmarkSpent(b *testing.B) {
	dir := b.TempDir()
	db, err := OpenDB(dir + "/ralph.db")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	tx, err := db.db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range 5000 {
		rec := &loop.Metrics{Loop: i, StartedAt: day.Add(time.Duration(i) * time.Second), CostUSD: 0.1, InputTokens: 1000, OutputTokens: 100}
		if err := db.recordSpend(tx, fmt.Sprintf("s%d", i%50), "t", rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if s, err := db.Spent(day); err != nil || s.Fleet.Calls != 5000 {
			b.Fatal(s.Fleet, err)
		}
	}
}

// Each call counts under the account it ran under: the session's account
// of the call's agent when the call ended, else the agent's own login; a
// call from before the ledger kept accounts counts under none. The figures
// outlive a restart.
func TestSpendPerAccount(t *testing.T) {
	dir := t.TempDir()
	db := openTestDB(t, dir)
	for _, s := range []string{"api", "web"} {
		if err := db.PutSession(Session{Name: s, Dir: "/src/" + s}); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	save := func(session, agent string, n int, cost float64, in int64) {
		t.Helper()
		rec := &loop.Metrics{Loop: n, Agent: agent, StartedAt: day.Add(time.Hour), DurationMS: 1000, CostUSD: cost, InputTokens: in}
		if err := db.SaveState(session, "t-"+session, loop.State{Loop: n}, rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutSessionAccount("api", "claude", "work"); err != nil {
		t.Fatal(err)
	}
	save("api", "claude", 1, 1, 100)
	save("web", "claude", 1, 2, 200) // no account of its own: the agent's login
	save("api", "codex", 2, 4, 400)  // another agent of the same session
	if err := db.PutSessionAccount("api", "claude", "home"); err != nil {
		t.Fatal(err)
	}
	save("api", "claude", 3, 8, 800)
	if _, err := db.db.Exec(`INSERT INTO spend(session, task_id, loop, at, cost, tokens) VALUES('web', 'old', 9, ?, 16, 1600)`, day.Add(time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"work": {1, 100}, "home": {8, 800}, "claude": {2, 200}, "codex": {4, 400}, "": {16, 1600}}
	check := func(db *DB) {
		t.Helper()
		s, err := db.Spent(day)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Accounts) != len(want) {
			t.Errorf("accounts: %+v", s.Accounts)
		}
		for name, w := range want {
			if a := s.Accounts[name]; a.Calls != 1 || a.CostUSD != w[0] || a.Tokens != int64(w[1]) {
				t.Errorf("account %q: %+v, want $%v and %v tokens", name, a, w[0], w[1])
			}
		}
	}
	check(db)
	db.Close()
	check(openTestDB(t, dir))
}
