package engine

import (
	"testing"

	"ralph/internal/loop"
	"ralph/internal/replay"
)

// Each iteration's record keeps the inputs of its decisions — the state
// before the Next that chose the call, what Next saw, the policy, the
// iteration — so that `ralph replay` makes them again; events and views
// leave them out.
func TestEngineRecordsKeepTheirReplayInputs(t *testing.T) {
	done := call{out: result("All done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"logout.go": "package x\n"}, plan: donePlanMD}
	h := newHarness(t, openPlanMD, []call{done, done}, nil)
	gate(h, 1, 0)
	h.run(t)
	recs := records(t, h.dir)
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	for i, m := range recs {
		r := m.Replay
		if r == nil || r.V != loop.ReplayVersion || r.Next != "call:fake" || r.Fold != "verify:project_complete" ||
			r.Before.Loop != i || r.Iteration.Loop != i+1 || !r.Policy.Verify.On || r.Observation.Now.IsZero() {
			t.Fatalf("record %d replay inputs %+v", i+1, r)
		}
	}
	var in []replay.Record
	for _, m := range recs {
		in = append(in, replay.Record{Where: "m", Metric: m})
	}
	if rep := replay.Records(in, replay.Today()); rep.Replayed != 6 || rep.ExitCode() != 0 {
		t.Errorf("replayed: %s", replay.Summary(rep))
	}
	ends := 0
	for _, ev := range h.events {
		if ev.Type == loop.EventIterationEnd {
			ends++
			if ev.Iteration == nil || ev.Iteration.Replay != nil {
				t.Errorf("iteration_end event carries %+v", ev.Iteration)
			}
		}
	}
	if ends != 2 {
		t.Errorf("%d iteration_end events", ends)
	}
}
