package ratelimit

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

// row is one step: record a call (tokens >= 0) or only ask (tokens < 0),
// then check Allow and the counts at the same instant.
type row struct {
	min    int
	tokens int64 // -1: ask only
	ok     bool
	until  int // minutes; checked when !ok
	calls  int
	toks   int64
}

func runRows(t *testing.T, l *Limiter, rows []row) {
	t.Helper()
	for i, r := range rows {
		now := at(r.min)
		if r.tokens >= 0 {
			l.Record(now, r.tokens)
		}
		ok, until := l.Allow(now)
		if ok != r.ok {
			t.Fatalf("row %d (+%dm): ok %v, want %v (until %v)", i, r.min, ok, r.ok, until)
		}
		want := now
		if !ok {
			want = at(r.until)
		}
		if !until.Equal(want) || !l.NextFree(now).Equal(want) {
			t.Fatalf("row %d (+%dm): until %v / next free %v, want %v", i, r.min, until, l.NextFree(now), want)
		}
		if c := l.CallsInWindow(now); c != r.calls {
			t.Fatalf("row %d (+%dm): %d calls in window, want %d", i, r.min, c, r.calls)
		}
		if tk := l.TokensInWindow(now); tk != r.toks {
			t.Fatalf("row %d (+%dm): %d tokens in window, want %d", i, r.min, tk, r.toks)
		}
	}
}

func TestCallLimit(t *testing.T) {
	l := New(Limits{MaxCallsPerHour: 3}, State{})
	runRows(t, l, []row{
		{min: 0, tokens: 0, ok: true, calls: 1},
		{min: 10, tokens: 0, ok: true, calls: 2},
		{min: 20, tokens: 0, ok: false, until: 60, calls: 3}, // exactly at the limit
		{min: 59, tokens: -1, ok: false, until: 60, calls: 3},
		{min: 60, tokens: -1, ok: true, calls: 2}, // the first call leaves at exactly +60
		{min: 60, tokens: 0, ok: false, until: 70, calls: 3},
		{min: 95, tokens: -1, ok: true, calls: 1},
		{min: 200, tokens: -1, ok: true, calls: 0},
	})
}

func TestLoweredLimitWaitsForEnoughCalls(t *testing.T) {
	var s State
	for i := range 5 {
		s.Calls = append(s.Calls, Call{At: at(i * 10)})
	}
	// Five calls but only two allowed: four must leave, the fourth at +30+60.
	runRows(t, New(Limits{MaxCallsPerHour: 2}, s), []row{
		{min: 45, tokens: -1, ok: false, until: 90, calls: 5},
		{min: 90, tokens: -1, ok: true, calls: 1},
	})
}

func TestTokenLimit(t *testing.T) {
	l := New(Limits{MaxCallsPerHour: 100, MaxTokensPerHour: 1000}, State{})
	runRows(t, l, []row{
		{min: 0, tokens: 400, ok: true, calls: 1, toks: 400},
		{min: 5, tokens: 500, ok: true, calls: 2, toks: 900},
		// 1000 reached, exactly the budget: once the 400 at +0 leaves, the
		// remaining 600 fit, so until +60.
		{min: 10, tokens: 100, ok: false, until: 60, calls: 3, toks: 1000},
		{min: 60, tokens: -1, ok: true, calls: 2, toks: 600},
		{min: 61, tokens: 2000, ok: false, until: 121, calls: 3, toks: 2600}, // one call alone over budget
		{min: 121, tokens: -1, ok: true, calls: 0},
	})
}

func TestTokenLimitBoundary(t *testing.T) {
	runRows(t, New(Limits{MaxTokensPerHour: 1000}, State{}), []row{
		{min: 0, tokens: 999, ok: true, calls: 1, toks: 999},
		{min: 1, tokens: 1, ok: false, until: 60, calls: 2, toks: 1000},
	})
}

func TestBothLimitsTakeTheLater(t *testing.T) {
	l := New(Limits{MaxCallsPerHour: 2, MaxTokensPerHour: 100}, State{})
	runRows(t, l, []row{
		{min: 0, tokens: 10, ok: true, calls: 1, toks: 10},
		// Calls free up at +60, but the 150 at +30 alone is over the token
		// budget until +90.
		{min: 30, tokens: 150, ok: false, until: 90, calls: 2, toks: 160},
	})
}

func TestNoLimits(t *testing.T) {
	l := New(Limits{}, State{})
	for i := range 1000 {
		l.Record(t0.Add(time.Duration(i)*time.Second), math.MaxInt64/2)
	}
	if ok, _ := l.Allow(at(17)); !ok {
		t.Fatal("0 limits must mean unlimited")
	}
	if got := l.TokensInWindow(at(17)); got != math.MaxInt64 {
		t.Fatalf("token sum must saturate, got %d", got)
	}
}

func TestClockBackwards(t *testing.T) {
	l := New(Limits{MaxCallsPerHour: 2}, State{})
	l.Record(at(600), 0) // stamped ten hours ahead of what the clock now says
	runRows(t, l, []row{
		{min: 0, tokens: -1, ok: true, calls: 1},
		{min: 0, tokens: 0, ok: false, until: 60, calls: 2}, // the future stamp counts as now
	})
	st := l.State()
	if !st.Calls[0].At.Equal(at(0)) {
		t.Fatalf("future stamp not pulled back: %v", st.Calls[0].At)
	}
	// Queries on a limiter with future stamps, before any Record, agree.
	q := New(Limits{MaxCallsPerHour: 1}, State{Calls: []Call{{At: at(600)}}})
	if ok, until := q.Allow(at(0)); ok || !until.Equal(at(60)) {
		t.Fatalf("future stamp: ok %v until %v", ok, until)
	}
	if n := q.CallsInWindow(at(0)); n != 1 {
		t.Fatalf("future stamp not counted: %d", n)
	}
}

func TestPruneAndPersist(t *testing.T) {
	l := New(DefaultLimits(), State{Calls: []Call{{At: at(30), Tokens: 7}, {At: at(0), Tokens: 3}}}) // unsorted on disk
	if n := l.CallsInWindow(at(45)); n != 2 {
		t.Fatalf("calls %d", n)
	}
	l.Prune(at(75))
	st := l.State()
	if len(st.Calls) != 1 || !st.Calls[0].At.Equal(at(30)) {
		t.Fatalf("after prune: %+v", st)
	}
	st.Calls[0].Tokens = 99 // the copy must not alias the limiter
	if l.TokensInWindow(at(75)) != 7 {
		t.Fatal("State() aliases the limiter")
	}
	b, err := json.Marshal(l.State())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"calls":[{"at":"2025-03-01T12:30:00Z","tokens":7}]}` {
		t.Fatalf("json %s", b)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, l.State()) || back.Validate() != nil {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if l.Limits() != DefaultLimits() {
		t.Fatal(l.Limits())
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"calls":[{"at":"0001-01-01T00:00:00Z"}]}`, "calls[0]: no time"},
		{`{"calls":[{"at":"2025-03-01T12:00:00Z","tokens":-5}]}`, "negative token count"},
	} {
		var s State
		if err := json.Unmarshal([]byte(c.json), &s); err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.json, err, c.want)
		}
		// A corrupt state must still behave: negative tokens count as none.
		New(Limits{MaxCallsPerHour: 1, MaxTokensPerHour: 1}, s).Allow(t0)
	}
	if err := (State{}).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Limits{MaxCallsPerHour: -1, MaxTokensPerHour: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "tokens") {
		t.Fatalf("limits: %v", err)
	}
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestFromLegacy(t *testing.T) {
	l := New(DefaultLimits(), FromLegacy(100, at(0)))
	if ok, until := l.Allow(at(20)); ok || !until.Equal(at(60)) {
		t.Fatalf("legacy 100 calls: ok %v until %v", ok, until)
	}
	if got := len(FromLegacy(-3, t0).Calls); got != 0 {
		t.Fatal(got)
	}
}

func TestUsageLimitWait(t *testing.T) {
	const m = DefaultUsageMargin
	for _, c := range []struct {
		name     string
		reset    time.Time
		hasReset bool
		def, mar time.Duration
		want     time.Time
	}{
		{"reset ahead", t0.Add(2 * time.Hour), true, 0, m, t0.Add(2*time.Hour + m)},
		{"no reset", time.Time{}, false, 0, m, t0.Add(DefaultUsageWait)},
		{"no reset, custom default", t0.Add(time.Hour), false, 15 * time.Minute, m, t0.Add(15 * time.Minute)},
		{"has reset but zero time", time.Time{}, true, 0, m, t0.Add(DefaultUsageWait)},
		{"reset in the past", t0.Add(-3 * time.Hour), true, 0, m, t0.Add(m)},
		{"reset exactly now", t0, true, 0, m, t0.Add(m)},
		{"weekly, 7 days ahead", t0.Add(7 * 24 * time.Hour), true, 0, m, t0.Add(7*24*time.Hour + m)},
		{"exactly 8 days ahead", t0.Add(MaxUsageWait), true, 0, m, t0.Add(MaxUsageWait + m)},
		{"absurd, 9 days ahead", t0.Add(9 * 24 * time.Hour), true, 0, m, t0.Add(DefaultUsageWait)},
		{"absurd, year 3000", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), true, 0, m, t0.Add(DefaultUsageWait)},
		{"negative margin", t0.Add(time.Hour), true, 0, -time.Hour, t0.Add(time.Hour)},
	} {
		if got := UsageLimitWait(t0, c.reset, c.hasReset, c.def, c.mar); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func BenchmarkAllow(b *testing.B) {
	l := New(Limits{MaxCallsPerHour: 100, MaxTokensPerHour: 1_000_000}, State{})
	for i := range 100 {
		l.Record(t0.Add(time.Duration(i)*30*time.Second), 9000)
	}
	now := at(55)
	b.ReportAllocs()
	for b.Loop() {
		l.Allow(now)
	}
}

func BenchmarkRecord(b *testing.B) {
	l := New(DefaultLimits(), State{})
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Minute)
		l.Record(now, 1000)
	}
}
