package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/ratelimit"
	"ralph/internal/redact"
)

var ts0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func stateStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	return s
}

func metricsLoops(t *testing.T, s *Store) []int {
	t.Helper()
	var loops []int
	bad, err := ReadMetrics(s.MetricsFile(), func(_ int, raw json.RawMessage) error {
		var m loop.Metrics
		err := json.Unmarshal(raw, &m)
		loops = append(loops, m.Loop)
		return err
	})
	if err != nil || len(bad) > 0 {
		t.Fatalf("metrics: %v %v", err, bad)
	}
	return loops
}

func TestSaveAndLoadState(t *testing.T) {
	s := stateStore(t)
	st := loop.State{Version: loop.StateVersion, Loop: 2, Breaker: breaker.State{Status: breaker.HalfOpen, NoProgress: 2},
		Calls: ratelimit.State{Calls: []ratelimit.Call{{At: ts0, Tokens: 5}}}, CostUSD: 0.5}
	rec := loop.Metrics{Loop: 2, StartedAt: ts0, Summary: "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 here"}
	if err := s.SaveState(st, &rec); err != nil {
		t.Fatal(err)
	}
	// Saving again (a later save without a new record, or a retry) does
	// not write the record twice.
	if err := s.SaveState(st, &rec); err != nil {
		t.Fatal(err)
	}
	got, found, warns, err := s.LoadState()
	if err != nil || !found || len(warns) > 0 {
		t.Fatalf("load: %v %v %v", found, warns, err)
	}
	if got.Breaker.Status != breaker.HalfOpen || got.Breaker.NoProgress != 2 || len(got.Calls.Calls) != 1 || got.Loop != 2 {
		t.Errorf("state %+v", got)
	}
	if loops := metricsLoops(t, s); len(loops) != 1 {
		t.Errorf("metrics loops %v", loops)
	}
	b, _ := os.ReadFile(s.MetricsFile())
	if strings.Contains(string(b), "ghp_abcdef") {
		t.Error("a token reached metrics.jsonl")
	}
	var view breaker.State
	if err := ReadJSON(s.BreakerFile(), &view); err != nil || view.Status != breaker.HalfOpen {
		t.Errorf("breaker view %+v %v", view, err)
	}
}

// A kill after the document was renamed into place but before the record
// was appended (or in the middle of the append) loses nothing: the next
// load appends it, once, after cutting off the torn line.
func TestLoadStateFinishesAnInterruptedSave(t *testing.T) {
	for _, torn := range []string{"", `{"loop":3,"started_at":"2026-11-25T10:0`} {
		s := stateStore(t)
		for n := 1; n <= 2; n++ {
			rec := loop.Metrics{Loop: n, StartedAt: ts0.Add(time.Duration(n) * time.Minute)}
			if err := s.SaveState(loop.State{Version: loop.StateVersion, Loop: n}, &rec); err != nil {
				t.Fatal(err)
			}
		}
		rec := loop.Metrics{Loop: 3, StartedAt: ts0.Add(3 * time.Minute)}
		if err := WriteJSON(s.LoopStateFile(), stateDoc{State: loop.State{Version: loop.StateVersion, Loop: 3}, Record: &rec}); err != nil {
			t.Fatal(err)
		}
		f, _ := os.OpenFile(s.MetricsFile(), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(torn)
		f.Close()
		if _, _, _, err := s.LoadState(); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := s.LoadState(); err != nil {
			t.Fatal(err)
		}
		if loops := metricsLoops(t, s); len(loops) != 3 || loops[2] != 3 {
			t.Errorf("torn %q: metrics loops %v, want [1 2 3]", torn, loops)
		}
	}
}

// A project an older ralph ran: the counters-only .loop_state and the
// breaker and rate limit in their own files become one document.
func TestLoadStateMigratesTheOlderFiles(t *testing.T) {
	s := stateStore(t)
	os.WriteFile(s.LoopStateFile(), []byte(`{"loop_count": 7, "total_cost_usd": 1.5, "stop": {"done_streak": 1}}`), 0o644)
	os.WriteFile(s.BreakerFile(), []byte(`{"state": "HALF_OPEN", "consecutive_no_progress": 2, "reason": "monitoring"}`), 0o644)
	os.WriteFile(s.RateLimitFile(), []byte(`{"calls": [{"at": "2026-11-25T09:30:00Z", "tokens": 10}]}`), 0o644)
	st, found, warns, err := s.LoadState()
	if err != nil || !found || len(warns) > 0 {
		t.Fatalf("load: %v %v %v", found, warns, err)
	}
	// Version 2: the agent session (version 3) is still the caller's to
	// adopt from .claude_session_id.
	if st.Version != 2 || st.Loop != 7 || st.CostUSD != 1.5 || st.Stop.DoneStreak != 1 ||
		st.Breaker.Status != breaker.HalfOpen || st.Breaker.NoProgress != 2 || len(st.Calls.Calls) != 1 {
		t.Errorf("migrated %+v", st)
	}
}

// A corrupt document is set aside and reported; the views it wrote last
// rebuild what they can.
func TestLoadStateRecoversFromACorruptDocument(t *testing.T) {
	s := stateStore(t)
	if err := s.SaveState(loop.State{Version: loop.StateVersion, Loop: 4, Breaker: breaker.State{Status: breaker.HalfOpen, NoProgress: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.LoopStateFile(), []byte(`{"version": 2, "loop_count": `), 0o644)
	st, _, warns, err := s.LoadState()
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], "corrupt") {
		t.Fatalf("load: %v %v", warns, err)
	}
	if st.Breaker.Status != breaker.HalfOpen {
		t.Errorf("breaker not rebuilt from its view: %+v", st.Breaker)
	}
	if m, _ := filepath.Glob(s.LoopStateFile() + ".corrupt-*"); len(m) != 1 {
		t.Errorf("the corrupt document was not kept aside: %v", m)
	}
	os.WriteFile(s.LoopStateFile(), []byte(`{"version": 2, "loop_count": -3}`), 0o644)
	if _, _, warns, _ := s.LoadState(); len(warns) != 1 || !strings.Contains(warns[0], "out of range") {
		t.Errorf("a negative loop count: %v", warns)
	}
}

// The document is the record encoded and masked once, spliced into the
// state: byte for byte what encoding the whole document and masking it
// writes, secrets in the state, in the record and in its replay included.
func TestStateDocIsTheWholeEncoding(t *testing.T) {
	secret := "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	st := loop.State{Version: loop.StateVersion, Loop: 7, Breaker: breaker.State{Status: breaker.Open, Message: "saw " + secret},
		Calls:       ratelimit.State{Calls: []ratelimit.Call{{At: ts0, Tokens: 5}, {At: ts0.Add(time.Minute)}}},
		Corrections: []string{"no " + secret, "plain"}, Last: loop.Last{Summary: `quote " and \ and ` + secret}}
	rec := loop.Metrics{Loop: 7, StartedAt: ts0, Summary: "token " + secret + " here", Agent: "claude",
		Replay: &loop.Replay{V: loop.ReplayVersion, Before: st, Next: "call:claude", Fold: "continue"}}
	for _, r := range []*loop.Metrics{nil, &rec} {
		want, err := json.Marshal(stateDoc{State: st, Record: r})
		if err != nil {
			t.Fatal(err)
		}
		want = append(redact.Encoded(want), '\n')
		doc, line, err := encodeStateDoc(st, r)
		if err != nil {
			t.Fatal(err)
		}
		if string(doc) != string(want) {
			t.Fatalf("the document:\n got %s\nwant %s", doc, want)
		}
		if strings.Contains(string(doc), secret) {
			t.Fatal("a secret reached the document")
		}
		if r == nil {
			continue
		}
		wantLine, _ := json.Marshal(r)
		if string(line) != string(redact.Encoded(wantLine)) {
			t.Fatalf("the record:\n got %s\nwant %s", line, redact.Encoded(wantLine))
		}
	}
}
