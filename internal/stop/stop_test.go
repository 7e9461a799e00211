package stop

import (
	"strings"
	"testing"
	"time"
)

var (
	openPlan = Plan{Known: true, Total: 4, Open: 3, NextOpen: "Add login"}
	donePlan = Plan{Known: true, Total: 4, Open: 0}
	noPlan   = Plan{}
)

// Each step table is one run: the observations in order and what must be
// decided after each.
type step struct {
	obs        Observation
	wantReason Reason // None = go on
	wantFix    string // a substring of the corrections, "" = none expected
}

func runSteps(t *testing.T, opts Options, steps []step) {
	t.Helper()
	var st State
	for i, s := range steps {
		var d Decision
		st, d = AfterCall(st, s.obs, opts)
		if d.Reason != s.wantReason || d.Stop != (s.wantReason != None) {
			t.Fatalf("step %d: got stop=%v %q (%s), want %q", i+1, d.Stop, d.Reason, d.Message, s.wantReason)
		}
		fixes := strings.Join(d.Corrections, " | ")
		if s.wantFix == "" && fixes != "" && s.wantReason == None {
			t.Fatalf("step %d: unexpected corrections %q", i+1, fixes)
		}
		if s.wantFix != "" && !strings.Contains(fixes, s.wantFix) {
			t.Fatalf("step %d: corrections %q, want one containing %q", i+1, fixes, s.wantFix)
		}
	}
}

func exitTrue(ind int, plan Plan) Observation {
	return Observation{ExitSignal: true, ExitSignalExplicit: true, StatusComplete: true, CompletionIndicators: ind, Plan: plan}
}

func TestAfterCall(t *testing.T) {
	progress := Observation{Plan: openPlan}
	cases := []struct {
		name  string
		opts  Options
		steps []step
	}{
		{"exit signal with two indicators and a finished plan stops at once", Options{}, []step{
			{exitTrue(2, donePlan), ProjectComplete, ""},
		}},
		{"exit signal with one indicator plus the checked plan is enough", Options{}, []step{
			{exitTrue(1, donePlan), ProjectComplete, ""},
		}},
		{"exit signal without a plan needs two indicators of its own", Options{}, []step{
			{exitTrue(2, noPlan), ProjectComplete, ""},
		}},
		{"open plan items contradict: told, then stops when repeated", Options{}, []step{
			{exitTrue(3, openPlan), None, `fix_plan.md still has 3 open item(s) (next: "Add login")`},
			{exitTrue(3, openPlan), CompletionSignals, ""},
		}},
		{"failing tests contradict", Options{}, []step{
			{Observation{ExitSignal: true, ExitSignalExplicit: true, StatusComplete: true, CompletionIndicators: 2, TestsFailing: true}, None, "the tests are failing"},
			{progress, None, ""},
			{Observation{ExitSignal: true, ExitSignalExplicit: true, StatusComplete: true, CompletionIndicators: 2, TestsFailing: true}, None, "the tests are failing"},
		}},
		{"a thin claim (one indicator) is questioned, then accepted when repeated", Options{}, []step{
			{exitTrue(1, noPlan), None, "only 1 completion indicator(s)"},
			{exitTrue(1, noPlan), CompletionSignals, ""},
		}},
		{"a contradicted claim then a fixed one completes", Options{}, []step{
			{exitTrue(2, openPlan), None, "open item"},
			{exitTrue(2, donePlan), ProjectComplete, ""},
		}},
		{"explicit false overrides wording and status", Options{}, []step{
			{Observation{ExitSignalExplicit: true, StatusComplete: true, HasCompletionSignal: true, CompletionIndicators: 4}, None, ""},
			{Observation{ExitSignalExplicit: true, StatusComplete: true, HasCompletionSignal: true, CompletionIndicators: 4}, None, ""},
			{Observation{ExitSignalExplicit: true, StatusComplete: true, HasCompletionSignal: true, CompletionIndicators: 4}, None, ""},
			{Observation{ExitSignalExplicit: true, StatusComplete: true, HasCompletionSignal: true, CompletionIndicators: 4}, None, ""},
			{Observation{ExitSignalExplicit: true, StatusComplete: true, HasCompletionSignal: true, CompletionIndicators: 4}, None, ""},
		}},
		{"explicit false resets a done streak", Options{}, []step{
			{Observation{HasCompletionSignal: true, CompletionIndicators: 1}, None, "without an EXIT_SIGNAL field"},
			{Observation{ExitSignalExplicit: true, HasCompletionSignal: true}, None, ""},
			{Observation{HasCompletionSignal: true, CompletionIndicators: 1}, None, "without an EXIT_SIGNAL field"},
			{Observation{HasCompletionSignal: true, CompletionIndicators: 1}, CompletionSignals, ""},
		}},
		{"no field: completion wording twice in a row stops", Options{}, []step{
			{Observation{HasCompletionSignal: true, CompletionIndicators: 1, Plan: donePlan}, None, "without an EXIT_SIGNAL field"},
			{Observation{HasCompletionSignal: true, CompletionIndicators: 1, Plan: donePlan}, CompletionSignals, ""},
		}},
		// "Done." twice with 3 of 4 tasks open is not success: wording the
		// plan contradicts is answered, never obeyed.
		{"no field: wording contradicted by open tasks never stops", Options{}, []step{
			{Observation{HasCompletionSignal: true, CompletionIndicators: 1, Plan: openPlan}, None, "but fix_plan.md still has 3"},
			{Observation{HasCompletionSignal: true, CompletionIndicators: 1, Plan: openPlan}, None, "but fix_plan.md still has 3"},
			{Observation{HasCompletionSignal: true, CompletionIndicators: 1, Plan: openPlan}, None, "but fix_plan.md still has 3"},
		}},
		{"no field: wording contradicted by failing tests never stops", Options{}, []step{
			{Observation{StatusComplete: true, CompletionIndicators: 1, TestsFailing: true}, None, "the tests are failing"},
			{Observation{StatusComplete: true, CompletionIndicators: 1, TestsFailing: true}, None, "the tests are failing"},
		}},
		{"safety threshold: not while the plan has open tasks", Options{}, []step{
			{Observation{CompletionIndicators: 2, Plan: openPlan}, None, ""},
			{Observation{CompletionIndicators: 2, Plan: openPlan}, None, ""},
			{Observation{CompletionIndicators: 2, Plan: openPlan}, None, ""},
			{Observation{CompletionIndicators: 2, Plan: openPlan}, None, ""},
			{Observation{CompletionIndicators: 2, Plan: openPlan}, None, ""},
			{Observation{CompletionIndicators: 2, Plan: openPlan}, None, ""},
		}},
		{"no field: wording interrupted by work does not stop", Options{}, []step{
			{Observation{StatusComplete: true, CompletionIndicators: 1}, None, "EXIT_SIGNAL"},
			{progress, None, ""},
			{Observation{StatusComplete: true, CompletionIndicators: 1}, None, "EXIT_SIGNAL"},
		}},
		{"MAX_CONSECUTIVE_DONE_SIGNALS=3", Options{MaxDoneSignals: 3}, []step{
			{Observation{HasCompletionSignal: true}, None, "EXIT_SIGNAL"},
			{Observation{HasCompletionSignal: true}, None, "EXIT_SIGNAL"},
			{Observation{HasCompletionSignal: true}, CompletionSignals, ""},
		}},
		{"safety threshold: indicators without a field, five times", Options{}, []step{
			{Observation{CompletionIndicators: 2}, None, ""},
			{Observation{CompletionIndicators: 2}, None, ""},
			{Observation{CompletionIndicators: 2}, None, ""},
			{Observation{CompletionIndicators: 2}, None, ""},
			{Observation{CompletionIndicators: 2}, SafetyThreshold, ""},
		}},
		{"safety streak broken by an ordinary iteration", Options{}, []step{
			{Observation{CompletionIndicators: 2}, None, ""},
			{Observation{CompletionIndicators: 2}, None, ""},
			{Observation{CompletionIndicators: 2}, None, ""},
			{Observation{CompletionIndicators: 2}, None, ""},
			{Observation{CompletionIndicators: 1}, None, ""},
			{Observation{CompletionIndicators: 2}, None, ""},
		}},
		{"test saturation after three test-only iterations", Options{}, []step{
			{Observation{TestOnly: true}, None, ""},
			{Observation{TestOnly: true}, None, ""},
			{Observation{TestOnly: true}, TestSaturation, ""},
		}},
		{"test-only streak broken by work", Options{}, []step{
			{Observation{TestOnly: true}, None, ""},
			{Observation{TestOnly: true}, None, ""},
			{progress, None, ""},
			{Observation{TestOnly: true}, None, ""},
			{Observation{TestOnly: true}, None, ""},
		}},
		{"test-only with explicit EXIT_SIGNAL false never saturates", Options{}, []step{
			{Observation{TestOnly: true, ExitSignalExplicit: true}, None, ""},
			{Observation{TestOnly: true, ExitSignalExplicit: true}, None, ""},
			{Observation{TestOnly: true, ExitSignalExplicit: true}, None, ""},
		}},
		{"clarification stops", Options{}, []step{
			{Observation{NeedsClarification: true, Questions: []string{"Which DB?"}}, NeedsClarification, ""},
		}},
		{"--no-clarify goes on with the safest default", Options{NoClarify: true}, []step{
			{Observation{NeedsClarification: true, Questions: []string{"Which DB?"}}, None, "safest reasonable default"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.opts, tc.steps) })
	}
}

func TestBeforeCall(t *testing.T) {
	cases := []struct {
		name   string
		plan   Plan
		used   Usage
		budget Budget
		want   Reason
	}{
		{"open plan, no budgets", openPlan, Usage{Loops: 50}, Budget{}, None},
		{"finished plan costs no call", donePlan, Usage{}, Budget{}, PlanComplete},
		{"a plan without tasks is not finished", Plan{Known: true}, Usage{}, Budget{}, None},
		{"no plan file", noPlan, Usage{}, Budget{}, None},
		{"max loops reached", openPlan, Usage{Loops: 10}, Budget{MaxLoops: 10}, MaxLoops},
		{"max loops not yet", openPlan, Usage{Loops: 9}, Budget{MaxLoops: 10}, None},
		{"max runtime", openPlan, Usage{Elapsed: 2 * time.Hour}, Budget{MaxRuntime: time.Hour}, MaxRuntime},
		{"max cost", openPlan, Usage{CostUSD: 5.01}, Budget{MaxCost: 5}, MaxCost},
		{"budgets before the plan", donePlan, Usage{Loops: 3}, Budget{MaxLoops: 3}, MaxLoops},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := BeforeCall(tc.plan, tc.used, tc.budget)
			if d.Reason != tc.want || d.Stop != (tc.want != None) {
				t.Errorf("got %v %q (%s), want %q", d.Stop, d.Reason, d.Message, tc.want)
			}
		})
	}
}

// An agent that ticks the last box and still answers EXIT_SIGNAL: false has
// finished the plan: the next check stops, with no call in between (the old
// "let it through once" deferral cost a call per EXIT_SIGNAL: false).
func TestFinishedPlanAfterExitSignalFalseStops(t *testing.T) {
	st, d := AfterCall(State{}, Observation{ExitSignalExplicit: true, Plan: donePlan}, Options{})
	if d.Stop || st != (State{}) {
		t.Fatalf("after the call: %+v %+v", st, d)
	}
	if d := BeforeCall(donePlan, Usage{}, Budget{}); d.Reason != PlanComplete {
		t.Fatalf("next check: %+v", d)
	}
}

func TestReasonSuccess(t *testing.T) {
	for r, want := range map[Reason]bool{ProjectComplete: true, PlanComplete: true, CompletionSignals: true,
		TestSaturation: true, SafetyThreshold: true, NeedsClarification: false, MaxLoops: false, MaxCost: false} {
		if r.Success() != want {
			t.Errorf("%s.Success() = %v", r, !want)
		}
	}
}
