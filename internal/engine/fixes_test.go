package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/control"
	"ralph/internal/reason"
	"ralph/internal/store"
)

// An agent that ticks one box per call and answers IN_PROGRESS with
// EXIT_SIGNAL: false finishes a 3-task plan in 3 calls and ralph stops
// there with plan_complete (exit 0) — not 3 more calls and an open breaker.
func TestEngineFinishedPlanAfterExitSignalFalse(t *testing.T) {
	plan := "# Plan\n- [ ] one\n- [ ] two\n- [ ] three\n"
	var calls []call
	for i, task := range []string{"one", "two", "three"} {
		plan = strings.Replace(plan, "- [ ] "+task, "- [x] "+task, 1)
		calls = append(calls, call{out: result(fmt.Sprintf("Did %s.", task)+block("IN_PROGRESS", false, "PASSING"), ""),
			plan: plan, files: map[string]string{fmt.Sprintf("f%d.go", i): "x"}})
	}
	h := newHarness(t, "# Plan\n- [ ] one\n- [ ] two\n- [ ] three\n", calls, nil)
	res := h.run(t)
	if res.Reason != reason.PlanComplete || res.ExitCode != 0 || h.agent.n != 3 {
		t.Fatalf("result %+v after %d calls; want plan_complete after 3", res, h.agent.n)
	}
}

// --max-runtime holds during waits: with 2 calls an hour and a 5-second
// budget, the run stops at the budget instead of waiting out the hour.
func TestEngineMaxRuntimeCutsAWait(t *testing.T) {
	work := call{out: result("Step."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{"a.go": "1"}, took: time.Second}
	work2 := work
	work2.files = map[string]string{"a.go": "2"}
	h := newHarness(t, openPlanMD, []call{work, work2}, func(s *Spec) {
		s.Policy.Limits.MaxCallsPerHour = 2
		s.Policy.Budget.MaxRuntime = 5 * time.Minute
	})
	res := h.run(t)
	if res.Reason != reason.MaxRuntime || res.ExitCode != 5 {
		t.Fatalf("result %+v", res)
	}
	var slept time.Duration
	for _, d := range h.clock.sleeps {
		slept += d
	}
	if slept > 5*time.Minute {
		t.Errorf("slept %s in all, past the 5-minute budget", slept)
	}
}

// When the next decision is a stop, ralph stops at once: no delay or
// back-off after the last allowed iteration.
func TestEngineNoWaitAfterTheLastIteration(t *testing.T) {
	fail := call{out: `{"type":"result","is_error":true,"result":"API Error: 529 Overloaded"}` + "\n", exit: 1}
	h := newHarness(t, openPlanMD, []call{fail}, func(s *Spec) {
		s.Policy.Budget.MaxLoops = 1
		s.Policy.Delay = 10 * time.Minute
	})
	res := h.run(t)
	if res.Reason != reason.MaxLoops {
		t.Fatalf("result %+v", res)
	}
	if len(h.clock.sleeps) != 1 { // the fake agent's own minute
		t.Errorf("sleeps %v: waited after the last allowed iteration", h.clock.sleeps)
	}
	for _, ev := range h.events {
		if ev.Type == EventWait {
			t.Errorf("wait event %+v", ev)
		}
	}
}

// The pause after a failure is a back-off, and says so.
func TestEngineBackoffIsNamed(t *testing.T) {
	fail := call{out: `{"type":"result","is_error":true,"result":"API Error: 529 Overloaded"}` + "\n", exit: 1}
	h := newHarness(t, openPlanMD, []call{fail, fail}, func(s *Spec) { s.Policy.Budget.MaxLoops = 2 })
	h.run(t)
	var waits []string
	for _, ev := range h.events {
		if ev.Type == EventWait {
			waits = append(waits, ev.WaitKind+": "+ev.Message)
		}
	}
	if len(waits) != 1 || !strings.HasPrefix(waits[0], "backoff: ") || strings.TrimPrefix(waits[0], "backoff: ") == "" {
		t.Errorf("waits %q, want one named back-off with a reason", waits)
	}
}

// `ralph circuit reset` while a loop runs: the request reaches the loop,
// which closes its breaker before the next call and keeps it closed —
// its next save does not bring the old breaker back.
func TestEngineAppliesABreakerResetRequestedWhileRunning(t *testing.T) {
	idle := call{out: result("Looked around."+block("IN_PROGRESS", false, "UNKNOWN"), "")}
	h := newHarness(t, openPlanMD, nil, func(s *Spec) { s.Policy.Budget.MaxLoops = 4 })
	st, _ := store.Open(h.dir)
	f := control.Open(st.RalphDir())
	h.engine = New(h.engine.spec, Deps{Agents: []agent.Adapter{h.agent}, Store: st, Sessions: h.sessions, Now: h.clock.Now,
		Sleep: h.clock.Sleep, Emit: func(ev Event) { h.events = append(h.events, ev) }, Control: f})
	reset := idle
	reset.during = func() { f.RequestReset("r1", "ralph circuit reset", "", h.clock.Now()) }
	// Two idle calls half-open the breaker; the reset arrives during the
	// second; without it the third idle call would open it.
	h.agent.calls = []call{idle, reset, idle, idle}
	res := h.run(t)
	if res.Reason != reason.MaxLoops || h.agent.n != 4 {
		t.Fatalf("result %+v after %d calls", res, h.agent.n)
	}
	if r, _ := f.Read(); r.ResetID != "" {
		t.Errorf("the applied request was left behind: %+v", r)
	}
	var closed bool
	for _, tr := range h.engine.State().Breaker.History {
		closed = closed || (tr.To == "CLOSED" && strings.Contains(tr.Message, "reset"))
	}
	if !closed || h.engine.State().ResetID != "r1" {
		t.Errorf("breaker history %+v", h.engine.State().Breaker.History)
	}
}

// A wait looks at the plan every second; a warning about it is said once.
func TestEnginePlanWarningOnceDuringAWait(t *testing.T) {
	h := newHarness(t, openPlanMD+"- [] almost a task\n", []call{{out: claudeLimit, exit: 1}}, func(s *Spec) { s.Policy.ExitOnUsageLimit = false })
	f := withControl(t, h)
	h.clock.onSleep = func() {
		if len(h.clock.sleeps) == 30 {
			f.Stop("ralph stop", h.clock.Now())
		}
	}
	h.run(t)
	n := 0
	for _, ev := range h.events {
		if ev.Type == EventWarning && strings.Contains(ev.Message, "fix_plan.md:") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d plan warnings during the wait, want 1", n)
	}
}
