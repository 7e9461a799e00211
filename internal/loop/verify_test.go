package loop

import (
	"strings"
	"testing"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/reason"
	"ralph/internal/stop"
)

func gated(max int) Policy {
	p := policy()
	p.Verify = VerifyPolicy{On: true, MaxFailures: max}
	return p
}

func TestNextGatesAFinishedPlan(t *testing.T) {
	done := stop.Plan{Known: true, Total: 3}
	spent := gated(3)
	spent.Budget.MaxLoops = 1
	for _, tt := range []struct {
		name   string
		p      Policy
		retry  bool
		loop   int
		kind   StepKind
		reason reason.Reason
	}{
		{"no gate: the plan ends the run", policy(), false, 0, Stop, reason.PlanComplete},
		{"gate: the plan is a claim to check", gated(3), false, 0, Check, reason.PlanComplete},
		{"a check just failed: the agent is called", gated(3), true, 0, Call, reason.None},
		{"a spent budget still stops first", spent, false, 1, Stop, reason.MaxLoops},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := begun(tt.p)
			st.Verify.Retry, st.Loop = tt.retry, tt.loop
			_, step := Next(st, Observation{Now: t0, Plan: done}, tt.p)
			if step.Kind != tt.kind || step.Reason != tt.reason {
				t.Fatalf("step %v %q, want %v %q", step.Kind, step.Reason, tt.kind, tt.reason)
			}
		})
	}
}

func TestFoldTurnsASuccessIntoAClaim(t *testing.T) {
	complete := Iteration{Loop: 1, Ended: t0, InRepo: true, Changed: true, Plan: stop.Plan{Known: true, Total: 2},
		Observed: an(func(a *analyze.Analysis) {
			a.Status, a.ExitSignal, a.ExitSignalExplicit, a.TestsStatus, a.CompletionIndicators = analyze.StatusComplete, true, true, analyze.TestsPassing, 2
		})}
	for _, tt := range []struct {
		name  string
		p     Policy
		kind  StepKind
		label string
	}{
		{"no gate", policy(), Stop, "stop:project_complete"},
		{"gate", gated(3), Check, "verify:project_complete"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := begun(tt.p)
			st.Verify = VerifyState{Retry: true, Verified: true}
			st, d := Fold(st, complete, tt.p)
			if d.Kind != tt.kind || d.Reason != reason.ProjectComplete || d.Label() != tt.label {
				t.Fatalf("decision %v %q %q", d.Kind, d.Reason, d.Label())
			}
			if st.Verify.Retry || st.Verify.Verified {
				t.Errorf("a call leaves no earlier check standing: %+v", st.Verify)
			}
		})
	}
}

func TestChecked(t *testing.T) {
	claim := Decision{Kind: Check, Reason: reason.ProjectComplete, Message: "EXIT_SIGNAL: true", Productive: true}
	pass := VerifyRun{Command: "make test", Ended: t0, ExitCode: 0}
	fail := VerifyRun{Command: "make test", Ended: t0, ExitCode: 2, Tail: "FAIL: TestLogin"}
	slow := VerifyRun{Command: "make test", Ended: t0, ExitCode: -1, TimedOut: true, DurationMS: 600_000}
	missing := VerifyRun{Command: "make test", Ended: t0, ExitCode: -1, StartErr: "make: not found"}
	type step struct {
		run      VerifyRun
		kind     StepKind
		reason   reason.Reason
		failures int
		fix      string // in the corrections for the next call
	}
	for _, tt := range []struct {
		name  string
		max   int
		steps []step
	}{
		{"a pass lets the claim stand", 3, []step{{pass, Stop, reason.ProjectComplete, 0, ""}}},
		{"a failure sends the agent back, told why", 3, []step{{fail, Call, reason.None, 1, "FAIL: TestLogin"}}},
		{"a timeout fails the claim", 3, []step{{slow, Call, reason.None, 1, "timed out after 10m0s"}}},
		{"a command that cannot start fails it", 3, []step{{missing, Call, reason.None, 1, "could not start"}}},
		{"the third failed claim in a row ends the run", 3, []step{
			{fail, Call, reason.None, 1, "exited 2"}, {fail, Call, reason.None, 2, "exited 2"}, {fail, Stop, reason.VerifyFailed, 3, ""}}},
		{"a pass clears the count", 2, []step{
			{fail, Call, reason.None, 1, ""}, {pass, Stop, reason.ProjectComplete, 0, ""}}},
		{"a default of three", 0, []step{
			{fail, Call, reason.None, 1, ""}, {fail, Call, reason.None, 2, ""}, {fail, Stop, reason.VerifyFailed, 3, ""}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := gated(tt.max)
			p.Delay = time.Minute
			st := begun(p)
			for i, s := range tt.steps {
				var d Decision
				st, d = Checked(st, claim, s.run, p)
				if d.Kind != s.kind || d.Reason != s.reason || st.Verify.Failures != s.failures {
					t.Fatalf("step %d: %v %q, %d failures; want %v %q, %d", i, d.Kind, d.Reason, st.Verify.Failures, s.kind, s.reason, s.failures)
				}
				if !d.Productive {
					t.Errorf("step %d: the call's own verdict was lost", i)
				}
				switch s.kind {
				case Stop:
					if s.reason.Success() != st.Verify.Verified {
						t.Errorf("step %d: verified %v", i, st.Verify.Verified)
					}
					if s.reason == reason.VerifyFailed && s.reason.ExitCode() != 9 {
						t.Errorf("verify_failed exits %d", s.reason.ExitCode())
					}
				case Call:
					if !st.Verify.Retry || !st.Pause.Until.Equal(t0.Add(time.Minute)) {
						t.Errorf("step %d: retry %v, pause %v", i, st.Verify.Retry, st.Pause)
					}
					fix := strings.Join(st.Corrections, "\n")
					if !strings.Contains(fix, "make test") || !strings.Contains(fix, s.fix) {
						t.Errorf("step %d: the next call is told %q", i, fix)
					}
					// Then the agent works again: a new call folds.
					st.Corrections = nil
				}
			}
		})
	}
}

// The gate survives a restart in the middle: the state round-trips.
func TestVerifyStateRoundTrips(t *testing.T) {
	p := gated(3)
	st, _ := Checked(begun(p), Decision{Kind: Check, Reason: reason.PlanComplete}, VerifyRun{Command: "x", ExitCode: 1}, p)
	back := roundTrip(t, st)
	if back.Verify != st.Verify {
		t.Fatalf("%+v, want %+v", back.Verify, st.Verify)
	}
	if b, _ := Begin(back, t0, p); b.Verify != (VerifyState{}) {
		t.Errorf("a new run starts with a clean gate: %+v", b.Verify)
	}
}
