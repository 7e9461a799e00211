package breaker

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// busy is a state with every field in use: an open breaker after a denial
// streak, with errors, sizes and history.
func busy(t testing.TB) State {
	t.Helper()
	s := New(t0)
	th := DefaultThresholds()
	steps := []Observation{
		withErrors(sized(5000, true), "panic: boom at 0xc000123456"),
		blocked("waiting for review"),
		withErrors(denied(sized(4000, true), "Bash(rm -rf)"), "panic: boom at 0xc000654321"),
		withErrors(denied(sized(100, false), "Write"), "panic: boom at 0xc000000001"),
	}
	for i, o := range steps {
		o.At, o.Loop = t0.Add(time.Duration(i)*time.Minute), i+1
		s, _ = s.Step(o, th)
	}
	if s.Status != Open || s.Reason != ReasonPermissionDenied {
		t.Fatalf("setup: %s %s", s.Status, s.Reason)
	}
	return s
}

func TestJSONRoundTrip(t *testing.T) {
	for name, s := range map[string]State{"new": New(t0), "busy": busy(t)} {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var back State
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, back) {
				t.Fatalf("round trip changed the state:\n%+v\n%+v", s, back)
			}
			if err := back.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
	b, _ := json.Marshal(busy(t))
	for _, key := range []string{`"state":"OPEN"`, `"reason_code":"permission_denied"`, `"consecutive_no_progress":2`,
		`"consecutive_permission_denials":2`, `"opened_at":`, `"history":[`, `"denied_tools":["Bash(rm -rf)","Write"]`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}
}

// A file written by the bash tool loads, validates and steps.
func TestLegacyBashFile(t *testing.T) {
	const file = `{
    "state": "HALF_OPEN",
    "last_change": "2025-03-01T12:00:00+00:00",
    "consecutive_no_progress": 2,
    "consecutive_same_error": 1,
    "consecutive_permission_denials": 0,
    "last_progress_loop": 4,
    "total_opens": 0,
    "reason": "Monitoring: 2 loops without progress",
    "current_loop": 6
}`
	var s State
	if err := json.Unmarshal([]byte(file), &s); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	n, d := s.Step(Observation{At: t0, Loop: 7, OutputBytes: 10}, DefaultThresholds())
	if n.Status != Open || d.Reason != ReasonNoProgress {
		t.Fatalf("%s %s", n.Status, d.Reason)
	}
}

func TestValidateCorrupt(t *testing.T) {
	for _, c := range []struct {
		name, json, want string
	}{
		{"unknown state", `{"state":"AJAR"}`, `state "AJAR"`},
		{"missing state", `{}`, `state ""`},
		{"unknown reason", `{"state":"OPEN","total_opens":1,"reason_code":"gremlins"}`, `reason_code "gremlins" is unknown`},
		{"reason while closed", `{"state":"CLOSED","reason_code":"no_progress"}`, `not OPEN`},
		{"negative counter", `{"state":"CLOSED","consecutive_no_progress":-1}`, `consecutive_no_progress is negative`},
		{"negative loop", `{"state":"CLOSED","current_loop":-4}`, `current_loop is negative`},
		{"open never opened", `{"state":"OPEN"}`, `total_opens is 0`},
		{"trial while closed", `{"state":"CLOSED","trial":true}`, `trial set`},
		{"orphan signature", `{"state":"CLOSED","error_signature":"abc"}`, `error_signature set`},
		{"orphan sample", `{"state":"CLOSED","error_sample":["x"]}`, `error_sample set`},
		{"orphan tools", `{"state":"CLOSED","denied_tools":["Write"]}`, `denied_tools set`},
		{"zero size", `{"state":"CLOSED","recent_output_bytes":[0]}`, `only positive`},
		{"too many sizes", `{"state":"CLOSED","recent_output_bytes":[1,2,3,4]}`, `holds 4 sizes`},
		{"bad transition", `{"state":"CLOSED","history":[{"from_state":"CLOSED","to_state":"WEIRD"}]}`, `history[0]`},
		{"bad transition reason", `{"state":"CLOSED","history":[{"from_state":"CLOSED","to_state":"OPEN","reason_code":"x"}]}`, `history[0]: reason_code`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s State
			if err := json.Unmarshal([]byte(c.json), &s); err != nil {
				t.Fatal(err)
			}
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want it to mention %q", err, c.want)
			}
			// Stepping a corrupt state must not panic.
			s.Step(Observation{At: t0, Loop: 1}, DefaultThresholds())
			s.OnStart(t0, DefaultThresholds())
		})
	}
	long := New(t0)
	long.History = make([]Transition, HistoryLimit+1)
	for i := range long.History {
		long.History[i] = Transition{From: Closed, To: HalfOpen}
	}
	if err := long.Validate(); err == nil || !strings.Contains(err.Error(), "history holds") {
		t.Fatalf("long history: %v", err)
	}
	// All problems are reported at once.
	var many State
	_ = json.Unmarshal([]byte(`{"state":"X","total_opens":-1,"consecutive_failures":-2}`), &many)
	if err := many.Validate(); err == nil || strings.Count(err.Error(), "\n") < 2 {
		t.Fatalf("want three problems, got %v", err)
	}
}

func TestThresholdsValidate(t *testing.T) {
	if err := DefaultThresholds().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Thresholds{}).Validate(); err != nil {
		t.Fatalf("all-off thresholds: %v", err)
	}
	bad := Thresholds{NoProgress: -1, OutputDeclinePercent: 100, Cooldown: -time.Second}
	err := bad.Validate()
	for _, want := range []string{"no-progress", "0..99", "cooldown"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want %q", err, want)
		}
	}
}

// Step is pure: the input state is untouched and two steps from the same
// state do not see each other, even when slices have spare capacity.
func TestStepIsPure(t *testing.T) {
	s := busy(t)
	s, _ = s.Reset(t0.Add(time.Hour), "")
	s.History = append(make([]Transition, 0, 64), s.History...)
	before, _ := json.Marshal(s)
	th := DefaultThresholds()
	a, _ := s.Step(withErrors(denied(idle(), "A"), "a"), th)
	b, _ := s.Step(withErrors(denied(progress(), "B"), "b"), th)
	after, _ := json.Marshal(s)
	if string(before) != string(after) {
		t.Fatalf("Step changed its receiver:\n%s\n%s", before, after)
	}
	if a.DeniedTools[0] != "A" || b.DeniedTools[0] != "B" || a.ErrorSignature == b.ErrorSignature {
		t.Fatalf("steps share state: %v %v", a.DeniedTools, b.DeniedTools)
	}
	a2, _ := s.Step(withErrors(denied(idle(), "A"), "a"), th)
	if !reflect.DeepEqual(a, a2) {
		t.Fatal("same inputs, different results")
	}
	if s.History[len(s.History)-1].Message != "manual reset" {
		t.Fatalf("default reset message: %q", s.History[len(s.History)-1].Message)
	}
}

func TestLongInputsAreClipped(t *testing.T) {
	huge := strings.Repeat("é", 2000)
	s, _ := New(t0).Step(Observation{At: t0, Loop: 1, Errors: []string{huge},
		PermissionDenied: true, DeniedTools: []string{huge}, Blocked: true, BlockedReason: huge}, DefaultThresholds())
	for _, v := range []string{s.ErrorSample[0], s.DeniedTools[0], s.BlockedReason} {
		if len(v) > maxLineLen+len("…") || !strings.HasSuffix(v, "…") {
			t.Fatalf("not clipped: %d bytes", len(v))
		}
	}
	many := make([]string, 50)
	for i := range many {
		many[i] = strings.Repeat("t", i+1)
	}
	s, _ = New(t0).Step(Observation{At: t0, Loop: 1, DeniedTools: many, Progress: true}, DefaultThresholds())
	if len(s.DeniedTools) != maxDeniedTools {
		t.Fatalf("%d tools kept", len(s.DeniedTools))
	}
}

func BenchmarkStep(b *testing.B) {
	s := busy(b)
	s, _ = s.Reset(t0.Add(time.Hour), "")
	for len(s.History) < HistoryLimit {
		s.History = append(s.History, s.History[0])
	}
	th := DefaultThresholds()
	obs := withErrors(sized(3000, false), "main.go:12:3: undefined: Foo", "FAIL ralph/internal/x 0.012s")
	obs.At, obs.Loop = t0.Add(2*time.Hour), 99
	b.ReportAllocs()
	for b.Loop() {
		s.Step(obs, th)
	}
}

func TestErrorHistoryKeepsTheLastDistinctErrors(t *testing.T) {
	var s State
	for i := range ErrorHistoryKeep + 2 {
		s.foldErrors([]string{fmt.Sprintf("Error: failure number %c", 'a'+i)})
		s.foldErrors([]string{fmt.Sprintf("Error: failure number %c", 'a'+i)}) // the same again adds nothing
	}
	if len(s.ErrorHistory) != ErrorHistoryKeep || !strings.Contains(s.ErrorHistory[0], "c") {
		t.Fatalf("history %q", s.ErrorHistory)
	}
	s.clearStreaks()
	if len(s.ErrorHistory) != ErrorHistoryKeep {
		t.Fatalf("a reset forgot the history: %q", s.ErrorHistory)
	}
}
