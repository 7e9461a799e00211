package reason

import "testing"

func TestExitCodes(t *testing.T) {
	want := map[Reason]int{
		ProjectComplete: 0, PlanComplete: 0, CompletionSignals: 0, TestSaturation: 0, SafetyThreshold: 0,
		BreakerOpen: 2, PermissionDenied: 3, UsageLimit: 4, MaxLoops: 5, MaxRuntime: 5, MaxCost: 5,
		NeedsClarification: 6, IntegrityFailure: 7, AgentSetup: 8, VerifyFailed: 9, Interrupted: 130,
		None: 1, "something_else": 1,
	}
	for r, code := range want {
		if got := r.ExitCode(); got != code {
			t.Errorf("%q.ExitCode() = %d, want %d", r, got, code)
		}
		if got := r.Success(); got != (code == 0) {
			t.Errorf("%q.Success() = %v", r, got)
		}
	}
	for _, r := range All {
		if _, ok := want[r]; !ok {
			t.Errorf("%q has no expected exit code", r)
		}
		if !r.Known() {
			t.Errorf("%q not Known", r)
		}
	}
	if Reason("x").Known() || None.Known() {
		t.Error("unknown reasons reported as known")
	}
}
