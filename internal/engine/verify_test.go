package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/store"
)

// gate turns the verify gate on with a scripted check: each run takes the
// next exit code.
func gate(h *harness, exits ...int) *[]int {
	var ran []int
	h.engine.spec.Policy.Verify = loop.VerifyPolicy{On: true, MaxFailures: 3}
	h.engine.deps.Verify = func(context.Context) loop.VerifyRun {
		code := exits[len(ran)]
		ran = append(ran, code)
		return loop.VerifyRun{Command: "make test", Ended: h.clock.Now(), ExitCode: code, Tail: "FAIL: TestLogout"}
	}
	return &ran
}

func records(t *testing.T, dir string) []loop.Metrics {
	t.Helper()
	var out []loop.Metrics
	store.ReadMetrics(filepath.Join(dir, ".ralph", "logs", "metrics.jsonl"), func(_ int, raw json.RawMessage) error {
		var m loop.Metrics
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
		return nil
	})
	return out
}

func TestEngineVerifiesAClaimBeforeItStands(t *testing.T) {
	done := call{out: result("All done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"logout.go": "package x\n"}, plan: donePlanMD}
	h := newHarness(t, openPlanMD, []call{done, done}, nil)
	ran := gate(h, 1, 0)
	res := h.run(t)
	if res.Reason != reason.ProjectComplete || res.ExitCode != 0 || res.Loops != 2 || len(*ran) != 2 {
		t.Fatalf("result %+v after %d checks", res, len(*ran))
	}
	// The second call was told what failed.
	if ctx := h.agent.invs[1].AppendSystemPrompt; !strings.Contains(ctx, "make test") || !strings.Contains(ctx, "FAIL: TestLogout") {
		t.Errorf("the call after a failed check was not told: %q", ctx)
	}
	if !h.status(t).Verified {
		t.Error("status.json does not say verified")
	}
	recs := records(t, h.dir)
	if len(recs) != 2 || recs[0].Verify == nil || recs[0].Verify.ExitCode != 1 || recs[0].Verified ||
		recs[1].Verify == nil || !recs[1].Verified || recs[1].Decision != "stop:project_complete" {
		t.Fatalf("records %+v", recs)
	}
	if recs[0].Decision != "continue" {
		t.Errorf("a failed claim's record says %q", recs[0].Decision)
	}
}

func TestEngineEndsWhenTheCheckNeverPasses(t *testing.T) {
	done := call{out: result("All done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"logout.go": "package x\n"}, plan: donePlanMD}
	h := newHarness(t, openPlanMD, []call{done, done, done}, nil)
	gate(h, 1, 1, 1)
	res := h.run(t)
	if res.Reason != reason.VerifyFailed || res.ExitCode != 9 || res.Loops != 3 {
		t.Fatalf("result %+v", res)
	}
	if st := h.status(t); st.ExitReason != "verify_failed" || st.Verified {
		t.Errorf("status %+v", st)
	}
}

// A plan complete at start is checked before it ends the run, and a failed
// check calls the agent instead of checking the same tree again.
func TestEngineChecksAPlanCompleteAtStart(t *testing.T) {
	h := newHarness(t, donePlanMD, []call{
		{out: result("Fixed the test."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"fix.go": "package x\n"}},
	}, nil)
	ran := gate(h, 2, 0)
	res := h.run(t)
	if res.Reason != reason.ProjectComplete || h.agent.n != 1 || len(*ran) != 2 {
		t.Fatalf("result %+v, %d calls, %d checks", res, h.agent.n, len(*ran))
	}
	var verifies int
	for _, ev := range h.events {
		if ev.Type == loop.EventVerify {
			verifies++
		}
	}
	if verifies != 2 {
		t.Errorf("%d verify events", verifies)
	}
}

// No command, no gate: a policy asking for one without it would accept no
// completion ever.
func TestEngineWithoutAVerifyCommandIsNotGated(t *testing.T) {
	h := newHarness(t, donePlanMD, nil, func(s *Spec) { s.Policy.Verify.On = true })
	if res := h.run(t); res.Reason != reason.PlanComplete {
		t.Fatalf("result %+v", res)
	}
}
