package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"
)

func TestAppendTransition(t *testing.T) {
	mk := func(n int) []Transition {
		var h []Transition
		for i := range n {
			h = append(h, Transition{Loop: i})
		}
		return h
	}
	tests := []struct {
		name               string
		before             int
		wantLen, wantFirst int
	}{
		{"empty", 0, 1, 0},
		{"under the bound", 10, 11, 0},
		{"reaching the bound", HistoryLimit - 1, HistoryLimit, 0},
		{"at the bound: oldest dropped", HistoryLimit, HistoryLimit, 1},
		{"over the bound (hand-edited)", 120, HistoryLimit, 71},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := mk(tt.before)
			orig := append([]Transition(nil), h...)
			got := AppendTransition(h, Transition{Loop: tt.before})
			if len(got) != tt.wantLen || got[0].Loop != tt.wantFirst || got[len(got)-1].Loop != tt.before {
				t.Fatalf("len %d first %d last %d", len(got), got[0].Loop, got[len(got)-1].Loop)
			}
			if !reflect.DeepEqual(h, orig) {
				t.Fatal("input modified")
			}
		})
	}
}

func TestRalphSessionLegacy(t *testing.T) {
	tests := []struct {
		name, in string
		want     RalphSession
	}{
		{"current form", `{"ralph_session_id":"r1","started_at":"2025-01-02T15:04:05Z","last_used":"2025-01-02T16:04:05Z",
			"reset_count":3,"last_reset_reason":"manual","last_reset_at":"2025-01-02T15:04:05Z"}`,
			RalphSession{ID: "r1", StartedAt: t0, LastUsed: t0.Add(time.Hour), ResetCount: 3, LastResetReason: ReasonManual, LastResetAt: t0}},
		{"bash tool form", `{"session_id":"ralph-1735830245-123","created_at":"2025-01-02T15:04:05+00:00",
			"last_used":"2025-01-02T15:04:05+00:00","reset_at":"","reset_reason":""}`,
			RalphSession{ID: "ralph-1735830245-123", StartedAt: t0, LastUsed: t0}},
		{"bash tool form after a reset", `{"session_id":"","created_at":"","last_used":"",
			"reset_at":"2025-01-02T15:04:05+00:00","reset_reason":"circuit_breaker_open"}`,
			RalphSession{ResetCount: 1, LastResetReason: ReasonBreakerOpen, LastResetAt: t0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got RalphSession
			if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
				t.Fatal(err)
			}
			if !equalRalph(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
			b, _ := json.Marshal(got) // and the current form round-trips
			var back RalphSession
			if err := json.Unmarshal(b, &back); err != nil || !equalRalph(back, got) {
				t.Fatalf("round trip: %+v, %v", back, err)
			}
		})
	}
}

func equalRalph(a, b RalphSession) bool {
	return a.ID == b.ID && a.StartedAt.Equal(b.StartedAt) && a.LastUsed.Equal(b.LastUsed) &&
		a.ResetCount == b.ResetCount && a.LastResetReason == b.LastResetReason && a.LastResetAt.Equal(b.LastResetAt)
}

func TestRalphSessionSteps(t *testing.T) {
	r := NewRalphSession("id", t0)
	r = r.Touch(t0.Add(time.Minute))
	r = r.AfterReset(ReasonExpired, t0.Add(time.Hour))
	r = r.AfterReset(ReasonManual, t0.Add(2*time.Hour))
	want := RalphSession{ID: "id", StartedAt: t0, LastUsed: t0.Add(2 * time.Hour), ResetCount: 2,
		LastResetReason: ReasonManual, LastResetAt: t0.Add(2 * time.Hour)}
	if r != want {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
}

func TestTransitionLegacy(t *testing.T) {
	in := `[{"timestamp":"2025-01-02T15:04:05+00:00","from_state":"active","to_state":"reset","reason":"manual_reset","loop_number":4},
		{"at":"2025-01-02T15:04:05Z","from_state":"reset","to_state":"active","reason":"new_session","loop":0}]`
	var h []Transition
	if err := json.Unmarshal([]byte(in), &h); err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || !h[0].At.Equal(t0) || h[0].Loop != 4 || h[0].Reason != "manual_reset" || h[0].From != StateActive ||
		h[1].Loop != 0 || h[1].Reason != ReasonNew || h[1].To != StateActive {
		t.Fatalf("got %+v", h)
	}
}

func TestHistoryFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".ralph_session_history")
	if err := SaveHistory(p, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "[]\n" {
		t.Errorf("empty history written as %q", b)
	}
	long := make([]Transition, 70)
	for i := range long {
		long[i] = Transition{At: t0, From: StateActive, To: StateReset, Reason: ReasonManual, Loop: i}
	}
	if err := SaveHistory(p, long); err != nil {
		t.Fatal(err)
	}
	got, err := LoadHistory(p)
	if err != nil || len(got) != HistoryLimit || got[0].Loop != 20 {
		t.Fatalf("got %d entries from %d, %v", len(got), got[0].Loop, err)
	}
}

func TestNewID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
}

func TestReasonIsReset(t *testing.T) {
	for _, r := range []Reason{ReasonBreakerOpen, ReasonCompletion, ReasonInterrupt, ReasonIsError, ReasonManual, ReasonExpired, ReasonCorrupt} {
		if !r.IsReset() {
			t.Errorf("%s is a reset", r)
		}
	}
	for _, r := range []Reason{ReasonNew, "manual_reset", ""} {
		if r.IsReset() {
			t.Errorf("%q is not a reset reason", r)
		}
	}
}
