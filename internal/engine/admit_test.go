package engine

import (
	"testing"
	"time"

	"ralph/internal/loop"
	"ralph/internal/reason"
)

// The host's admission holds a call the loop decided on: the loop waits
// (kind budget, the host's reason, status waiting), asks again, and calls
// once admitted, with the cap the host leaves it — or its own --max-cost's
// remainder, when that is less — and tells the host when the call is over.
func TestEngineAdmission(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{
		{out: result("Added login."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{"login.go": "package x\n"}},
		{out: result("All tasks are done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"logout.go": "package x\n"}, plan: donePlanMD},
	}, func(s *Spec) { s.Policy.Budget.MaxCost = 2 })
	start := h.clock.Now()
	until := start.Add(3 * time.Hour)
	const why = "waiting for budget: fleet cost 5.00/5.00 USD today, until 00:00 Europe/Berlin"
	asked, done := 0, 0
	var waitingSeen string
	h.engine.deps.Admit = func() Admission {
		asked++
		if asked <= 3 { // held three times over: one wait, announced once
			return Admission{Until: until, Message: why}
		}
		return Admission{Allow: true, MaxCostUSD: 10, Done: func() { done++ }}
	}
	h.clock.onSleep = func() {
		if waitingSeen == "" {
			st := h.status(t)
			if st.Wait != nil {
				waitingSeen = st.Status + " " + st.Wait.Kind + " " + st.Wait.Reason
			}
		}
	}
	if res := h.run(t); res.Reason != reason.ProjectComplete {
		t.Fatalf("result %+v", res)
	}
	if len(h.agent.invs) != 2 || done != 2 || asked != 5 {
		t.Fatalf("%d calls, %d done, asked %d times", len(h.agent.invs), done, asked)
	}
	if waitingSeen != "waiting "+loop.WaitBudget+" "+why {
		t.Errorf("status while held: %q", waitingSeen)
	}
	var waits []Event
	for _, ev := range h.events {
		if ev.Type == EventWait && ev.WaitKind == loop.WaitBudget {
			waits = append(waits, ev)
		}
	}
	if len(waits) != 1 || waits[0].Message != why || !waits[0].Until.Equal(until) {
		t.Errorf("budget waits announced: %+v", waits)
	}
	// The run's own --max-cost ($2) is less than the host's $10: the
	// first call may spend $2, the second what the first ($0.25) left.
	if got := []float64{h.agent.invs[0].MaxBudgetUSD, h.agent.invs[1].MaxBudgetUSD}; got[0] != 2 || got[1] != 1.75 {
		t.Errorf("caps %v, want [2 1.75]", got)
	}
}

// Without a host's budget (ralph run), the run's own --max-cost is what a
// call is capped at; without either, nothing is.
func TestEngineCapsCallsAtMaxCost(t *testing.T) {
	for _, tc := range []struct {
		maxCost float64
		want    []float64
	}{{2, []float64{2, 1.75}}, {0, []float64{0, 0}}} {
		h := newHarness(t, openPlanMD, []call{
			{out: result("Added login."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{"login.go": "package x\n"}},
			{out: result("All tasks are done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"logout.go": "package x\n"}, plan: donePlanMD},
		}, func(s *Spec) { s.Policy.Budget.MaxCost = tc.maxCost })
		h.run(t)
		if got := []float64{h.agent.invs[0].MaxBudgetUSD, h.agent.invs[1].MaxBudgetUSD}; got[0] != tc.want[0] || got[1] != tc.want[1] {
			t.Errorf("--max-cost %v: caps %v, want %v", tc.maxCost, got, tc.want)
		}
	}
}
