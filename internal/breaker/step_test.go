package breaker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// op is one row of a step table: an iteration (obs), a start or a reset at
// minute `at`, and what the breaker must look like afterwards.
type op struct {
	at     int // minutes after t0
	kind   string
	obs    Observation
	th     *Thresholds // overrides the scenario's for this row (OnStart)
	want   Status
	reason Reason // wanted Decision.Reason ("" when not open)
	change bool   // wanted Decision.Changed()
	check  func(t *testing.T, s State, d Decision)
}

const (
	opStep  = ""
	opStart = "start"
	opReset = "reset"
)

type scenario struct {
	name  string
	th    Thresholds
	start State // zero value means New(t0)
	ops   []op
}

func run(t *testing.T, sc scenario) State {
	t.Helper()
	s := sc.start
	if s.Status == "" {
		s = New(t0)
	}
	loop := 0
	for i, o := range sc.ops {
		at := t0.Add(time.Duration(o.at) * time.Minute)
		th := sc.th
		if o.th != nil {
			th = *o.th
		}
		var d Decision
		switch o.kind {
		case opStep:
			loop++
			obs := o.obs
			obs.At, obs.Loop = at, loop
			s, d = s.Step(obs, th)
		case opStart:
			s, d = s.OnStart(at, th)
		case opReset:
			s, d = s.Reset(at, "test reset")
		}
		where := fmt.Sprintf("row %d (%s at +%dm)", i, pick(o.kind == "", "step", o.kind), o.at)
		if s.Status != o.want || d.To != o.want {
			t.Fatalf("%s: state %s / decision.To %s, want %s (message %q)", where, s.Status, d.To, o.want, s.Message)
		}
		if d.Reason != o.reason {
			t.Fatalf("%s: reason %q, want %q (message %q)", where, d.Reason, o.reason, d.Message)
		}
		if d.Changed() != o.change {
			t.Fatalf("%s: changed %v, want %v (%s → %s)", where, d.Changed(), o.change, d.From, d.To)
		}
		if d.Halt() != (o.want == Open) || (d.Err() != nil) != d.Halt() {
			t.Fatalf("%s: halt %v, err %v", where, d.Halt(), d.Err())
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: stepped state does not validate: %v", where, err)
		}
		if o.check != nil {
			o.check(t, s, d)
		}
	}
	return s
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// Observation builders; output sizes are constant unless a test is about them.
func progress() Observation           { return Observation{Progress: true, OutputBytes: 1000} }
func idle() Observation               { return Observation{OutputBytes: 1000} }
func questions() Observation          { return Observation{OnlyQuestions: true, OutputBytes: 200} }
func failed() Observation             { return Observation{AgentFailed: true} }
func sized(n int, p bool) Observation { return Observation{Progress: p, OutputBytes: n} }
func blocked(why string) Observation {
	return Observation{Blocked: true, BlockedReason: why, OutputBytes: 1000}
}
func withErrors(o Observation, lines ...string) Observation { o.Errors = lines; return o }
func denied(o Observation, tools ...string) Observation {
	o.PermissionDenied, o.DeniedTools = true, tools
	return o
}

func wantCounters(np, se, pd, f int) func(*testing.T, State, Decision) {
	return func(t *testing.T, s State, _ Decision) {
		t.Helper()
		got := [4]int{s.NoProgress, s.SameError, s.PermissionDenials, s.Failures}
		if got != [4]int{np, se, pd, f} {
			t.Fatalf("counters (no-progress, same-error, denials, failures) = %v, want %v", got, [4]int{np, se, pd, f})
		}
	}
}

func messageHas(subs ...string) func(*testing.T, State, Decision) {
	return func(t *testing.T, _ State, d Decision) {
		t.Helper()
		for _, sub := range subs {
			if !strings.Contains(d.Message, sub) {
				t.Fatalf("message %q lacks %q", d.Message, sub)
			}
		}
	}
}

func TestNoProgress(t *testing.T) {
	th := DefaultThresholds()
	for _, sc := range []scenario{
		{name: "opens exactly at the threshold", th: th, ops: []op{
			{obs: idle(), want: Closed, check: wantCounters(1, 0, 0, 0)},
			{obs: idle(), want: HalfOpen, change: true, check: messageHas("2 no-progress")},
			{obs: idle(), want: Open, reason: ReasonNoProgress, change: true, check: func(t *testing.T, s State, d Decision) {
				if !s.OpenedAt.Equal(t0) || s.TotalOpens != 1 || !d.ResumeAt.Equal(t0.Add(30*time.Minute)) {
					t.Fatalf("opened_at %v total %d resume %v", s.OpenedAt, s.TotalOpens, d.ResumeAt)
				}
			}},
		}},
		{name: "progress while HALF_OPEN closes and resets", th: th, ops: []op{
			{obs: withErrors(idle(), "boom"), want: Closed},
			{obs: denied(withErrors(idle(), "boom"), "Write"), want: HalfOpen, change: true, check: wantCounters(2, 2, 1, 0)},
			{obs: progress(), want: Closed, change: true, check: func(t *testing.T, s State, d Decision) {
				wantCounters(0, 0, 0, 0)(t, s, d)
				if s.LastProgressLoop != 3 || len(s.History) != 2 || s.ErrorSignature != "" || s.DeniedTools != nil {
					t.Fatalf("after recovery: %+v", s)
				}
			}},
			{obs: idle(), want: Closed, check: wantCounters(1, 0, 0, 0)},
		}},
		{name: "recovery keeps the recovering iteration's own errors", th: th, ops: []op{
			{obs: withErrors(idle(), "boom"), want: Closed},
			{obs: withErrors(idle(), "boom"), want: HalfOpen, change: true},
			{obs: withErrors(progress(), "boom"), want: Closed, change: true, check: wantCounters(0, 1, 0, 0)},
		}},
		{name: "questions-only iterations neither count nor reset", th: th, ops: []op{
			{obs: idle(), want: Closed},
			{obs: questions(), want: Closed, check: wantCounters(1, 0, 0, 0)},
			{obs: questions(), want: Closed, check: wantCounters(1, 0, 0, 0)},
			{obs: idle(), want: HalfOpen, change: true},
			{obs: questions(), want: HalfOpen},
			{obs: idle(), want: Open, reason: ReasonNoProgress, change: true},
		}},
		{name: "only questions never trip", th: th, ops: []op{
			{obs: questions(), want: Closed}, {obs: questions(), want: Closed},
			{obs: questions(), want: Closed}, {obs: questions(), want: Closed, check: wantCounters(0, 0, 0, 0)},
		}},
		{name: "failures neither count nor reset no progress", th: th, ops: []op{
			{obs: idle(), want: Closed},
			{obs: failed(), want: Closed, check: wantCounters(1, 0, 0, 1)},
			{obs: idle(), want: HalfOpen, change: true, check: wantCounters(2, 0, 0, 0)},
			{obs: failed(), want: HalfOpen},
			{obs: idle(), want: Open, reason: ReasonNoProgress, change: true},
		}},
		{name: "observations while OPEN are ignored", th: th, ops: []op{
			{obs: idle(), want: Closed}, {obs: idle(), want: HalfOpen, change: true},
			{obs: idle(), want: Open, reason: ReasonNoProgress, change: true},
			{obs: progress(), want: Open, reason: ReasonNoProgress, check: func(t *testing.T, s State, _ Decision) {
				if s.CurrentLoop != 3 || s.TotalOpens != 1 || s.LastProgressLoop != 0 {
					t.Fatalf("OPEN state changed by an observation: %+v", s)
				}
			}},
		}},
		{name: "threshold 0 turns the rule off", th: Thresholds{}, ops: []op{
			{obs: idle(), want: Closed}, {obs: idle(), want: Closed}, {obs: idle(), want: Closed},
			{obs: failed(), want: Closed}, {obs: denied(idle(), "Write"), want: Closed},
		}},
		{name: "threshold 1 opens at once, skipping HALF_OPEN", th: Thresholds{NoProgress: 1}, ops: []op{
			{obs: idle(), want: Open, reason: ReasonNoProgress, change: true},
		}},
	} {
		t.Run(sc.name, func(t *testing.T) { run(t, sc) })
	}
}

func TestBlocked(t *testing.T) {
	th := DefaultThresholds()
	run(t, scenario{th: th, ops: []op{
		{obs: blocked("needs the staging DB password"), want: Closed, check: func(t *testing.T, s State, _ Decision) {
			if s.BlockedReason != "needs the staging DB password" {
				t.Fatalf("blocked reason %q", s.BlockedReason)
			}
		}},
		// BLOCKED outweighs file changes.
		{obs: func() Observation { o := blocked(""); o.Progress = true; return o }(), want: HalfOpen, change: true},
		{obs: blocked("still no password"), want: Open, reason: ReasonBlocked, change: true,
			check: messageHas("BLOCKED (still no password)", "3 no-progress")},
	}})
	// The reason survives a plain idle iteration but goes with progress.
	run(t, scenario{th: th, ops: []op{
		{obs: blocked("x"), want: Closed},
		{obs: idle(), want: HalfOpen, change: true, check: func(t *testing.T, s State, _ Decision) {
			if s.BlockedReason != "x" {
				t.Fatalf("blocked reason %q", s.BlockedReason)
			}
		}},
		{obs: progress(), want: Closed, change: true, check: func(t *testing.T, s State, _ Decision) {
			if s.BlockedReason != "" {
				t.Fatalf("blocked reason %q kept after progress", s.BlockedReason)
			}
		}},
	}})
}

func TestSameError(t *testing.T) {
	th := DefaultThresholds()
	// Same failure, lines reordered, other line numbers, timings and temp dirs.
	variants := [][]string{
		{"main.go:12:3: undefined: Foo", "FAIL ralph/internal/x 0.012s"},
		{"FAIL ralph/internal/x 0.101s", "main.go:14:3: undefined: Foo"},
		{"main.go:15:9: undefined: Foo", "  FAIL   ralph/internal/x 1.5s", "main.go:15:9: undefined: Foo"},
		{"FAIL ralph/internal/x 2s", "main.go:99:1: undefined: Foo"},
		{"main.go:1:1: undefined: Foo", "FAIL ralph/internal/x 12ms"},
	}
	var ops []op
	for i, v := range variants {
		o := op{obs: withErrors(progress(), v...), want: Closed, check: wantCounters(0, i+1, 0, 0)}
		if i == len(variants)-1 {
			o = op{obs: o.obs, want: Open, reason: ReasonSameError, change: true,
				check: messageHas("5 consecutive", "main.go:1:1: undefined: Foo")}
		}
		ops = append(ops, o)
	}
	run(t, scenario{name: "opens at the threshold despite progress", th: th, ops: ops})

	run(t, scenario{name: "a different error restarts, no error resets", th: th, ops: []op{
		{obs: withErrors(progress(), "cannot open foo.txt (line 1)"), want: Closed, check: wantCounters(0, 1, 0, 0)},
		{obs: withErrors(progress(), "cannot open foo.txt (line 2)"), want: Closed, check: wantCounters(0, 2, 0, 0)},
		{obs: withErrors(progress(), "cannot open bar.txt (line 2)"), want: Closed, check: wantCounters(0, 1, 0, 0)},
		{obs: withErrors(progress(), "cannot open bar.txt", "cannot open foo.txt"), want: Closed, check: wantCounters(0, 1, 0, 0)},
		{obs: progress(), want: Closed, check: func(t *testing.T, s State, d Decision) {
			wantCounters(0, 0, 0, 0)(t, s, d)
			if s.ErrorSignature != "" || s.ErrorSample != nil {
				t.Fatalf("signature kept: %+v", s)
			}
		}},
		{obs: withErrors(progress(), "cannot open bar.txt (line 9)"), want: Closed, check: wantCounters(0, 1, 0, 0)},
	}})
}

func TestPermissionDenied(t *testing.T) {
	th := DefaultThresholds()
	run(t, scenario{name: "streak broken by a clean iteration", th: th, ops: []op{
		{obs: denied(progress(), "Bash(npm install)"), want: Closed, check: wantCounters(0, 0, 1, 0)},
		{obs: progress(), want: Closed, check: wantCounters(0, 0, 0, 0)},
		{obs: denied(progress(), "Write"), want: Closed, check: wantCounters(0, 0, 1, 0)},
	}})
	run(t, scenario{name: "two in a row trip with the union of tools", th: th, ops: []op{
		{obs: denied(progress(), "Write", "Bash(npm install)"), want: Closed},
		{obs: denied(idle(), "Write", " WebFetch "), want: Open, reason: ReasonPermissionDenied, change: true,
			check: func(t *testing.T, s State, d Decision) {
				want := []string{"Bash(npm install)", "WebFetch", "Write"}
				if !slices.Equal(d.DeniedTools, want) || !slices.Equal(s.DeniedTools, want) {
					t.Fatalf("denied tools %q / %q, want %q", d.DeniedTools, s.DeniedTools, want)
				}
				var trip *TripError
				if !errors.As(d.Err(), &trip) || trip.Reason != ReasonPermissionDenied || trip.Reason.ExitReason() != "permission_denied" {
					t.Fatalf("err %v", d.Err())
				}
				messageHas("ALLOWED_TOOLS", "Bash(npm install), WebFetch, Write")(t, s, d)
			}},
	}})
	run(t, scenario{name: "a denial flag without tool names still counts", th: th, ops: []op{
		{obs: Observation{PermissionDenied: true, Progress: true}, want: Closed},
		{obs: Observation{PermissionDenied: true, Progress: true}, want: Open, reason: ReasonPermissionDenied, change: true},
	}})
}

func TestFailures(t *testing.T) {
	th := DefaultThresholds()
	five := func(last op) []op {
		ops := []op{}
		for i := range 4 {
			ops = append(ops, op{obs: failed(), want: Closed, check: wantCounters(0, 0, 0, i+1)})
		}
		return append(ops, last)
	}
	run(t, scenario{name: "five in a row open", th: th, ops: five(
		op{obs: Observation{TimedOut: true}, want: Open, reason: ReasonRepeatedFailures, change: true,
			check: messageHas("5 consecutive", "timed out")})})
	run(t, scenario{name: "a clean iteration breaks the streak", th: th, ops: append(five(
		op{obs: questions(), want: Closed, check: wantCounters(0, 0, 0, 0)}),
		op{obs: failed(), want: Closed, check: wantCounters(0, 0, 0, 1)})})
	run(t, scenario{name: "a timed-out iteration with progress is productive", th: th, ops: five(
		op{obs: Observation{TimedOut: true, Progress: true}, want: Closed, check: wantCounters(0, 0, 0, 0)})})
	run(t, scenario{name: "a failure with progress is productive", th: th, ops: []op{
		{obs: idle(), want: Closed},
		{obs: Observation{AgentFailed: true, Progress: true}, want: Closed, check: wantCounters(0, 0, 0, 0)},
	}})
	run(t, scenario{name: "failures outrank same error", th: th, ops: []op{
		{obs: withErrors(failed(), "x"), want: Closed}, {obs: withErrors(failed(), "x"), want: Closed},
		{obs: withErrors(failed(), "x"), want: Closed}, {obs: withErrors(failed(), "x"), want: Closed},
		{obs: withErrors(failed(), "x"), want: Open, reason: ReasonRepeatedFailures, change: true},
	}})
	run(t, scenario{name: "denials outrank everything", th: th, ops: []op{
		{obs: denied(idle(), "Write"), want: Closed},
		{obs: denied(idle(), "Write"), want: Open, reason: ReasonPermissionDenied, change: true},
	}})
}

func TestOutputDecline(t *testing.T) {
	th := DefaultThresholds()
	// The worked example of the package doc, row for row.
	example := []op{
		{obs: sized(12000, true), want: Closed},
		{obs: sized(11000, true), want: Closed},
		{obs: sized(13000, true), want: Closed},
		{obs: sized(10000, false), want: Closed, check: wantCounters(1, 0, 0, 0)},
	}
	run(t, scenario{name: "doc example", th: th, ops: append(slices.Clone(example),
		op{obs: sized(3000, false), want: Open, reason: ReasonOutputDecline, change: true, check: messageHas("70%")})})
	run(t, scenario{name: "doc example, 3500 bytes is no decline", th: th, ops: append(slices.Clone(example),
		op{obs: sized(3500, false), want: HalfOpen, change: true, check: wantCounters(2, 0, 0, 0)})})
	run(t, scenario{name: "boundary: exactly 30 % of the baseline is no decline", th: th, ops: []op{
		{obs: sized(1000, true), want: Closed},
		{obs: sized(300, false), want: Closed, check: wantCounters(1, 0, 0, 0)},
	}})
	run(t, scenario{name: "boundary: one byte less is a decline", th: th, ops: []op{
		{obs: sized(1000, true), want: Closed},
		{obs: sized(299, false), want: HalfOpen, change: true, check: wantCounters(2, 0, 0, 0)},
	}})
	run(t, scenario{name: "decline with progress is harmless", th: th, ops: []op{
		{obs: sized(10000, true), want: Closed},
		{obs: sized(10, true), want: Closed, check: wantCounters(0, 0, 0, 0)},
	}})
	run(t, scenario{name: "decline that does not decide opens as no_progress", th: th, ops: []op{
		{obs: sized(10000, true), want: Closed},
		{obs: sized(9000, false), want: Closed},
		{obs: sized(8000, false), want: HalfOpen, change: true},
		{obs: sized(0, false), want: Open, reason: ReasonNoProgress, change: true, check: wantCounters(4, 0, 0, 0)},
	}})
	run(t, scenario{name: "no baseline, no decline; questions and empty output stay out of it", th: th, ops: []op{
		{obs: sized(0, false), want: Closed, check: wantCounters(1, 0, 0, 0)},
		{obs: questions(), want: Closed, check: func(t *testing.T, s State, _ Decision) {
			if len(s.OutputSizes) != 0 {
				t.Fatalf("sizes %v", s.OutputSizes)
			}
		}},
	}})
	run(t, scenario{name: "percent 0 turns it off", th: Thresholds{NoProgress: 3}, ops: []op{
		{obs: sized(10000, true), want: Closed},
		{obs: sized(1, false), want: Closed, check: wantCounters(1, 0, 0, 0)},
	}})
}
