package loop

import (
	"fmt"
	"time"

	"ralph/internal/reason"
)

// DefaultVerifyMaxFailures is VERIFY_MAX_FAILURES's default.
const DefaultVerifyMaxFailures = 3

// VerifyPolicy is the verify gate: with it on, no success ends a run
// before the project's own check passes (VERIFY_CMD, run by the host).
type VerifyPolicy struct {
	On bool `json:"on,omitempty"`
	// MaxFailures is how many claims in a row may fail the check before
	// the run ends with verify_failed (0: DefaultVerifyMaxFailures).
	MaxFailures int `json:"max_failures,omitempty"`
}

func (v VerifyPolicy) maxFailures() int {
	if v.MaxFailures > 0 {
		return v.MaxFailures
	}
	return DefaultVerifyMaxFailures
}

// VerifyState is where the gate stands.
type VerifyState struct {
	// Failures counts the claims in a row that failed the check.
	Failures int `json:"failures,omitempty"`
	// Retry: the last claim failed its check, so the next step is a call
	// for the agent to fix it, never the same check on the same tree.
	Retry bool `json:"retry,omitempty"`
	// Verified: the last claim passed; cleared by the next call.
	Verified bool `json:"verified,omitempty"`
}

// VerifyRun is one run of the verify command, measured at the edge.
type VerifyRun struct {
	Command    string    `json:"command"`
	Ended      time.Time `json:"ended"`
	ExitCode   int       `json:"exit_code"`
	DurationMS int64     `json:"duration_ms"`
	TimedOut   bool      `json:"timed_out,omitempty"`
	// StartErr is why the command could not start ("" when it ran).
	StartErr string `json:"start_error,omitempty"`
	// Tail is the end of what it printed (both streams), secrets masked.
	Tail string `json:"tail,omitempty"`
}

// Passed reports a check that accepts the claim: it ran and exited 0.
func (r VerifyRun) Passed() bool { return r.StartErr == "" && !r.TimedOut && r.ExitCode == 0 }

// Outcome says how the check ended, for people ("exited 1").
func (r VerifyRun) Outcome() string {
	switch {
	case r.StartErr != "":
		return "could not start: " + r.StartErr
	case r.TimedOut:
		return fmt.Sprintf("timed out after %s", time.Duration(r.DurationMS)*time.Millisecond)
	case r.ExitCode == 0:
		return "passed"
	}
	return fmt.Sprintf("exited %d", r.ExitCode)
}

// gate turns a success into a claim to check when the gate is on; other
// decisions pass unchanged.
func gate(r reason.Reason, p Policy) bool { return p.Verify.On && r.Success() }

// Checked folds the verify command's run into the state: d is the claim
// (a Check decision from Next or Fold). A pass lets the claimed success
// stand; a failure sends the agent back to work, told what failed, until
// MaxFailures claims in a row have failed.
func Checked(st State, d Decision, run VerifyRun, p Policy) (State, Decision) {
	st = st.clone()
	claimed, msg := d.Reason, d.Message
	if run.Passed() {
		st.Verify = VerifyState{Verified: true}
		d.Kind, d.Message = Stop, fmt.Sprintf("%s; verified: `%s` passed", msg, run.Command)
		d.ResetSession = "completion"
		return st, d
	}
	st.Verify.Failures++
	st.Verify.Verified = false
	n, max := st.Verify.Failures, p.Verify.maxFailures()
	if n >= max {
		d.Kind, d.Reason = Stop, reason.VerifyFailed
		d.Message = fmt.Sprintf("the agent claimed completion %d times in a row and the verify command `%s` failed each time (last: %s)", n, run.Command, run.Outcome())
		d.ResetSession = "verify_failed"
		return st, d
	}
	st.Verify.Retry = true
	tail := run.Tail
	if tail == "" {
		tail = "(no output)"
	}
	st.Corrections = append(st.Corrections, fmt.Sprintf("You reported the work complete (%s), but ralph ran the project's verify command `%s` and it %s. "+
		"The end of its output:\n%s\nFix what it reports; claim completion only once it passes.", claimed, run.Command, run.Outcome(), tail))
	d.Kind, d.Reason = Call, reason.None
	d.Message = fmt.Sprintf("completion claimed (%s) but the verify command %s (%d of %d failed claims allowed)", claimed, run.Outcome(), n, max)
	d.ResetSession = ""
	if p.Delay > 0 && !run.Ended.IsZero() {
		st.Pause = Pause{Until: run.Ended.Add(p.Delay), Kind: WaitDelay}
	}
	return st, d
}
