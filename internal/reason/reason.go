// Package reason names why a loop ended. One typed value travels from the
// decision that made it to every place that shows or acts on it: the exit
// code of `ralph run`, status.json's exit_reason, the metrics, the monitor,
// `ralph stats` and, for the fleet, a task's final state. The strings are
// the contract of DESIGN.md and must not change.
package reason

// Reason is why a loop stopped; "" is no reason (it has not stopped).
type Reason string

// Reasons, with their exit codes.
const (
	None Reason = ""

	// Success: exit 0.
	ProjectComplete   Reason = "project_complete"
	PlanComplete      Reason = "plan_complete"
	CompletionSignals Reason = "completion_signals"
	TestSaturation    Reason = "test_saturation"
	SafetyThreshold   Reason = "safety_threshold"

	BreakerOpen        Reason = "circuit_breaker_open" // exit 2
	PermissionDenied   Reason = "permission_denied"    // exit 3
	UsageLimit         Reason = "usage_limit"          // exit 4
	MaxLoops           Reason = "max_loops"            // exit 5
	MaxRuntime         Reason = "max_runtime"          // exit 5
	MaxCost            Reason = "max_cost"             // exit 5
	NeedsClarification Reason = "needs_clarification"  // exit 6
	IntegrityFailure   Reason = "integrity_failure"    // exit 7
	// AgentSetup: the agent cannot work as set up (not logged in, a bad
	// key, an unknown model or flag); only a person can fix it.
	AgentSetup Reason = "agent_setup_failure" // exit 8
	// VerifyFailed: the agent claimed the work done and the verify
	// command kept failing (VERIFY_MAX_FAILURES claims in a row).
	VerifyFailed Reason = "verify_failed" // exit 9
	Interrupted  Reason = "interrupted"   // exit 130
)

// All lists every reason a loop can end with, in the order of the exit-code
// table.
var All = []Reason{
	ProjectComplete, PlanComplete, CompletionSignals, TestSaturation, SafetyThreshold,
	BreakerOpen, PermissionDenied, UsageLimit, MaxLoops, MaxRuntime, MaxCost,
	NeedsClarification, IntegrityFailure, AgentSetup, VerifyFailed, Interrupted,
}

// Success reports whether the reason means the work is done.
func (r Reason) Success() bool {
	switch r {
	case ProjectComplete, PlanComplete, CompletionSignals, TestSaturation, SafetyThreshold:
		return true
	}
	return false
}

// ExitCode is the exit status of `ralph run` for r. An unknown reason is a
// start-up or configuration error (1), never success.
func (r Reason) ExitCode() int {
	switch {
	case r.Success():
		return 0
	case r == BreakerOpen:
		return 2
	case r == PermissionDenied:
		return 3
	case r == UsageLimit:
		return 4
	case r == MaxLoops, r == MaxRuntime, r == MaxCost:
		return 5
	case r == NeedsClarification:
		return 6
	case r == IntegrityFailure:
		return 7
	case r == AgentSetup:
		return 8
	case r == VerifyFailed:
		return 9
	case r == Interrupted:
		return 130
	}
	return 1
}

// Known reports whether r is one of All.
func (r Reason) Known() bool {
	for _, k := range All {
		if r == k {
			return true
		}
	}
	return false
}

// String is the contract name.
func (r Reason) String() string { return string(r) }
