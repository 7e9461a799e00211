package store

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/ratelimit"
)

// A save rewrites a view only when its content changed (a rewrite is a new
// file renamed over the old: the file changes identity), and again when
// the view was removed or edited since this store wrote it.
func TestSaveStateWritesOnlyChangedViews(t *testing.T) {
	s := stateStore(t)
	st := loop.State{Version: loop.StateVersion, Loop: 1, Breaker: breaker.State{Status: breaker.Closed},
		Calls: ratelimit.State{Calls: []ratelimit.Call{{At: ts0}}}}
	if err := s.SaveState(st, nil); err != nil {
		t.Fatal(err)
	}
	stat := func(path string) os.FileInfo {
		t.Helper()
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	breaker0, calls0 := stat(s.BreakerFile()), stat(s.RateLimitFile())

	st.Loop = 2
	st.Calls.Calls = append(st.Calls.Calls, ratelimit.Call{At: ts0.Add(1)})
	if err := s.SaveState(st, nil); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(breaker0, stat(s.BreakerFile())) {
		t.Error("the breaker's view was rewritten though the breaker did not change")
	}
	if os.SameFile(calls0, stat(s.RateLimitFile())) {
		t.Error("the rate limit's view was not rewritten though a call was added")
	}

	if err := os.Remove(s.BreakerFile()); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(st, nil); err != nil {
		t.Fatal(err)
	}
	stat(s.BreakerFile())
	if err := os.WriteFile(s.BreakerFile(), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(st, nil); err != nil {
		t.Fatal(err)
	}
	var got breaker.State
	if err := ReadJSON(s.BreakerFile(), &got); err != nil || got.Status != breaker.Closed {
		t.Errorf("the edited view was not written again: %+v %v", got, err)
	}
}

// The rate limit's view is encoded by hand: the same bytes as
// json.MarshalIndent, whatever the calls.
func TestCallsViewEncoding(t *testing.T) {
	loc := time.FixedZone("X", 5*3600+1800)
	for _, st := range []ratelimit.State{
		{},
		{Calls: []ratelimit.Call{}},
		{Calls: []ratelimit.Call{{At: ts0}}},
		{Calls: []ratelimit.Call{{At: ts0, Tokens: 12345}, {At: ts0.Add(1500 * time.Millisecond).In(loc), Tokens: -1}, {At: ts0.Add(time.Nanosecond)}}},
	} {
		want, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if got := string(appendCalls(nil, st)); got != string(want)+"\n" {
			t.Errorf("%+v:\n%s\nwant\n%s", st, got, want)
		}
	}
}

// The metrics line a save appended is not read back at the next save, but
// a file changed since (emptied, or another line after ours) is: the
// record is appended once, and again when it is no longer the last.
func TestSaveStateAppendsTheRecordOnce(t *testing.T) {
	s := stateStore(t)
	st := loop.State{Version: loop.StateVersion, Loop: 1, Breaker: breaker.State{Status: breaker.Closed}}
	rec := &loop.Metrics{Loop: 1, StartedAt: ts0}
	lines := func() int {
		t.Helper()
		b, err := os.ReadFile(s.MetricsFile())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range b {
			if c == '\n' {
				n++
			}
		}
		return n
	}
	save := func(want int) {
		t.Helper()
		if err := s.SaveState(st, rec); err != nil {
			t.Fatal(err)
		}
		if got := lines(); got != want {
			t.Fatalf("%d metrics lines, want %d", got, want)
		}
	}
	save(1)
	save(1)
	if err := os.WriteFile(s.MetricsFile(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	save(1)
	f, err := os.OpenFile(s.MetricsFile(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"loop":7,"started_at":"2025-01-01T00:00:00Z"}` + "\n")
	f.Close()
	save(3)
	save(3)
}
