package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"ralph/internal/loop"
)

// Each agent call gets what CallEnv gives, asked after the call's
// iteration_start event (the trace context of the call's span), on top of
// the spec's environment, which it leaves as it was.
func TestCallEnvReachesEachCall(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{
		{out: result("Added login."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{"login.go": "package x\n"},
			plan: strings.Replace(openPlanMD, "- [ ] Add login", "- [x] Add login", 1)},
		{out: result("All tasks are done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"logout.go": "package x\n"}, plan: donePlanMD},
	}, func(s *Spec) { s.Env = []string{"FROM_SPEC=1"} })
	starts := 0
	h.engine.deps.Emit = func(ev Event) {
		h.events = append(h.events, ev)
		if ev.Type == loop.EventIterationStart {
			starts++
		}
	}
	h.engine.deps.CallEnv = func() []string { return []string{fmt.Sprintf("TRACEPARENT=call-%d", starts)} }
	h.run(t)
	if len(h.agent.invs) != 2 {
		t.Fatalf("%d calls", len(h.agent.invs))
	}
	for i, inv := range h.agent.invs {
		want := []string{"FROM_SPEC=1", fmt.Sprintf("TRACEPARENT=call-%d", i+1)}
		if !slices.Equal(inv.Env, want) {
			t.Errorf("call %d env %q, want %q", i+1, inv.Env, want)
		}
	}
	if spec := h.engine.Spec(); !slices.Equal(spec.Env, []string{"FROM_SPEC=1"}) {
		t.Errorf("the spec's environment changed: %q", spec.Env)
	}
}
