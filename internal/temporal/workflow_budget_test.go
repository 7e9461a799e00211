package temporal

import (
	"testing"
	"time"

	"ralph/internal/loop"
)

// The daemon's hold (a spent daily budget) keeps the workflow from calling
// until the day it names; one without an end holds until the daemon lifts
// it, and the workflow then calls at once.
func TestWorkflowWaitsOutTheDaemonsHold(t *testing.T) {
	t.Run("until the next day", func(t *testing.T) {
		s := &script{steps: []step{working, done}}
		env := newEnv(t, s)
		nextDay := env.Now().UTC().Round(0).Add(5 * time.Hour)
		env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t9", Session: "a", Policy: policy(),
			Hold: &loop.Hold{Kind: loop.WaitBudget, Until: nextDay, Message: "waiting for budget: fleet cost 5.00/5.00 USD today"}})
		result(t, env)
		if len(s.at) != 2 || s.at[0].Before(nextDay) {
			t.Fatalf("calls at %v, want two after %v", s.at, nextDay)
		}
	})
	t.Run("until lifted", func(t *testing.T) {
		s := &script{steps: []step{working, done}}
		env := newEnv(t, s)
		lifted := env.Now().UTC().Round(0).Add(time.Hour)
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalHold, (*loop.Hold)(nil)) }, time.Hour)
		env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t10", Session: "a", Policy: policy(),
			Hold: &loop.Hold{Kind: loop.WaitBudget, Message: "waiting for budget: 1 call(s) running may spend the rest"}})
		result(t, env)
		if len(s.at) != 2 || s.at[0].Before(lifted) {
			t.Fatalf("calls at %v, want two after %v", s.at, lifted)
		}
	})
}

// An allowance lets the workflow call while its own calls have not spent
// it, tells each call what is left, and holds the next once they have —
// before the daemon hears of them — until the daemon says more.
func TestWorkflowSpendsItsAllowance(t *testing.T) {
	costly := func(in IterateInput, now time.Time) (loop.Iteration, error) {
		it, err := working(in, now)
		it.Observed.Usage.CostUSD = 1.5
		return it, err
	}
	s := &script{steps: []step{costly, costly, done}}
	env := newEnv(t, s)
	lifted := env.Now().UTC().Round(0).Add(time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalHold, (*loop.Hold)(nil)) }, time.Hour)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t11", Session: "a", Policy: policy(),
		Hold: &loop.Hold{Kind: loop.WaitBudget, Message: "waiting for budget: spent", Allowance: &loop.Allowance{CostUSD: 2}}})
	result(t, env)
	if len(s.calls) != 3 {
		t.Fatalf("%d calls", len(s.calls))
	}
	if caps := []float64{s.calls[0].MaxBudgetUSD, s.calls[1].MaxBudgetUSD, s.calls[2].MaxBudgetUSD}; caps[0] != 2 || caps[1] != 0.5 || caps[2] != 0 {
		t.Errorf("caps %v, want [2 0.5 0]", caps)
	}
	if s.at[1].After(lifted) || s.at[2].Before(lifted) {
		t.Errorf("calls at %v: the third must wait for the daemon (%v)", s.at, lifted)
	}
}
