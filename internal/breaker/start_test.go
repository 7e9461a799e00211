package breaker

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestCooldownAndStart(t *testing.T) {
	th := DefaultThresholds()
	openIt := []op{
		{at: 0, obs: idle(), want: Closed},
		{at: 10, obs: idle(), want: HalfOpen, change: true},
		{at: 20, obs: idle(), want: Open, reason: ReasonNoProgress, change: true},
	}
	run(t, scenario{name: "before and exactly at the end of the cooldown", th: th, ops: append(slices.Clone(openIt),
		op{at: 49, kind: opStart, want: Open, reason: ReasonNoProgress, check: func(t *testing.T, _ State, d Decision) {
			if !d.ResumeAt.Equal(t0.Add(50 * time.Minute)) {
				t.Fatalf("resume at %v", d.ResumeAt)
			}
		}},
		op{at: 50, kind: opStart, want: HalfOpen, change: true, check: func(t *testing.T, s State, d Decision) {
			if !s.Trial || s.Reason != "" {
				t.Fatalf("trial %v reason %q", s.Trial, s.Reason)
			}
			messageHas("30m0s", "no_progress")(t, s, d)
		}},
		op{at: 51, obs: questions(), want: HalfOpen},
		op{at: 52, obs: idle(), want: Open, reason: ReasonNoProgress, change: true, check: func(t *testing.T, s State, d Decision) {
			if s.TotalOpens != 2 || !s.OpenedAt.Equal(t0.Add(52*time.Minute)) || s.Trial {
				t.Fatalf("reopen: %+v", s)
			}
		}},
	)})
	run(t, scenario{name: "a trial failure reopens as repeated_failures", th: th, ops: append(slices.Clone(openIt),
		op{at: 60, kind: opStart, want: HalfOpen, change: true},
		op{at: 61, obs: failed(), want: Open, reason: ReasonRepeatedFailures, change: true, check: messageHas("trial")},
	)})
	run(t, scenario{name: "a productive trial closes", th: th, ops: append(slices.Clone(openIt),
		op{at: 60, kind: opStart, want: HalfOpen, change: true},
		op{at: 61, obs: progress(), want: Closed, change: true, check: wantCounters(0, 0, 0, 0)},
		op{at: 62, obs: idle(), want: Closed},
	)})
	auto := th
	auto.AutoReset = true
	run(t, scenario{name: "auto reset closes at once", th: th, ops: append(slices.Clone(openIt),
		op{at: 21, kind: opStart, th: &auto, want: Closed, change: true, check: wantCounters(0, 0, 0, 0)},
		op{at: 22, kind: opStart, th: &auto, want: Closed},
	)})
	run(t, scenario{name: "start on a closed breaker keeps its streaks", th: th, ops: []op{
		{obs: idle(), want: Closed},
		{at: 5, kind: opStart, th: &auto, want: Closed, check: wantCounters(1, 0, 0, 0)},
	}})
	run(t, scenario{name: "manual reset", th: th, ops: append(slices.Clone(openIt),
		op{at: 21, kind: opReset, want: Closed, change: true, check: func(t *testing.T, s State, d Decision) {
			wantCounters(0, 0, 0, 0)(t, s, d)
			if last := s.History[len(s.History)-1]; last.Message != "test reset" || last.From != Open || s.TotalOpens != 1 {
				t.Fatalf("history %+v total %d", last, s.TotalOpens)
			}
		}},
	)})
	cold := th
	cold.Cooldown = 0
	run(t, scenario{name: "zero cooldown retries on the next start", th: cold, ops: append(slices.Clone(openIt),
		op{at: 20, kind: opStart, want: HalfOpen, change: true})})
}

func TestOnStartClockAndLegacy(t *testing.T) {
	th := DefaultThresholds()
	future := State{Status: Open, Reason: ReasonSameError, TotalOpens: 1, OpenedAt: t0.Add(48 * time.Hour), LastChange: t0}
	s, d := future.OnStart(t0, th)
	if s.Status != Open || !s.OpenedAt.Equal(t0) || !d.ResumeAt.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("future opened_at: %+v %+v", s, d)
	}
	// The bash tool wrote no opened_at: last_change stands in for it.
	legacy := State{Status: Open, TotalOpens: 1, LastChange: t0, Message: "No progress detected in 3 consecutive loops"}
	if err := legacy.Validate(); err != nil {
		t.Fatal(err)
	}
	if s, _ := legacy.OnStart(t0.Add(29*time.Minute), th); s.Status != Open {
		t.Fatalf("legacy before cooldown: %s", s.Status)
	}
	if s, _ := legacy.OnStart(t0.Add(30*time.Minute), th); s.Status != HalfOpen {
		t.Fatalf("legacy after cooldown: %s", s.Status)
	}
	// No time at all: the cooldown starts now.
	bare := State{Status: Open, TotalOpens: 1}
	if s, d := bare.OnStart(t0, th); s.Status != Open || !d.ResumeAt.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("bare: %+v %+v", s, d)
	}
}

func TestHistoryIsBounded(t *testing.T) {
	s := New(t0)
	th := DefaultThresholds()
	for i := range 200 {
		obs := idle()
		if i%3 == 2 {
			obs = progress()
		}
		obs.At, obs.Loop = t0.Add(time.Duration(i)*time.Minute), i+1
		s, _ = s.Step(obs, th)
	}
	if len(s.History) != HistoryLimit {
		t.Fatalf("history %d", len(s.History))
	}
	if last := s.History[len(s.History)-1]; last.Loop != 200 || last.To != HalfOpen {
		t.Fatalf("last transition %+v", last)
	}
	if len(s.OutputSizes) != DeclineWindow {
		t.Fatalf("sizes %v", s.OutputSizes)
	}
}

func TestTrialReasons(t *testing.T) {
	th := DefaultThresholds()
	openIt := []op{
		{obs: sized(10000, true), want: Closed},
		{obs: withErrors(sized(9000, true), "x"), want: Closed},
		{obs: withErrors(sized(9000, true), "x"), want: Closed},
		{obs: withErrors(sized(9000, true), "x"), want: Closed},
		{obs: withErrors(sized(9000, true), "x"), want: Closed},
		{obs: withErrors(sized(9000, true), "x"), want: Open, reason: ReasonSameError, change: true},
		{at: 30, kind: opStart, want: HalfOpen, change: true},
	}
	run(t, scenario{name: "blocked trial", th: th, ops: append(slices.Clone(openIt),
		op{at: 31, obs: blocked("no key"), want: Open, reason: ReasonBlocked, change: true, check: messageHas("(no key)", "trial")})})
	run(t, scenario{name: "declining trial", th: th, ops: append(slices.Clone(openIt),
		op{at: 31, obs: sized(10, false), want: Open, reason: ReasonOutputDecline, change: true})})
	run(t, scenario{name: "idle trial", th: th, ops: append(slices.Clone(openIt),
		op{at: 31, obs: sized(9000, false), want: Open, reason: ReasonNoProgress, change: true})})
	run(t, scenario{name: "same error again", th: th, ops: append(slices.Clone(openIt),
		op{at: 31, obs: withErrors(sized(9000, true), "x"), want: Open, reason: ReasonSameError, change: true,
			check: wantCounters(0, 6, 0, 0)})})
}

func TestTripError(t *testing.T) {
	s := State{Status: Open, TotalOpens: 1, Reason: ReasonNoProgress, Message: "stuck"}
	if s.CanExecute() || !New(t0).CanExecute() {
		t.Fatal("CanExecute")
	}
	_, d := s.Step(idle(), DefaultThresholds())
	if !d.ResumeAt.IsZero() {
		t.Fatalf("unknown opening time, resume %v", d.ResumeAt)
	}
	var trip *TripError
	if !errors.As(d.Err(), &trip) || trip.Error() != "circuit breaker open (no_progress): stuck" {
		t.Fatalf("%v", d.Err())
	}
	if ReasonNoProgress.ExitReason() != "circuit_breaker_open" {
		t.Fatal(ReasonNoProgress.ExitReason())
	}
	legacy := &TripError{Message: "No progress detected"}
	if legacy.Error() != "circuit breaker open: No progress detected" {
		t.Fatal(legacy.Error())
	}
	if (Decision{From: Closed, To: Closed}).Err() != nil || !New(t0).ResumeAt(DefaultThresholds()).IsZero() {
		t.Fatal("closed breaker must not halt")
	}
}

func TestTrialTimeout(t *testing.T) {
	s := State{Status: HalfOpen, Trial: true, NoProgress: 3, TotalOpens: 1}
	n, d := s.Step(Observation{At: t0, Loop: 9, TimedOut: true}, DefaultThresholds())
	if n.Status != Open || d.Reason != ReasonRepeatedFailures || d.Message != "the agent timed out without progress in the trial iteration after the cooldown" {
		t.Fatalf("%s %s %q", n.Status, d.Reason, d.Message)
	}
}
