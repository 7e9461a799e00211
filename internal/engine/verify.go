package engine

import (
	"context"

	"ralph/internal/loop"
	"ralph/internal/reason"
)

// checkClaim runs the verify command on a claimed success and folds the
// run with loop.Checked. rec, when set, is the claiming iteration's
// record, completed with the run and saved by the caller; a claim made
// before any call (a plan complete at start) is saved here.
func (e *Engine) checkClaim(ctx context.Context, d loop.Decision, rec *loop.Metrics) (loop.Decision, error) {
	e.status("running", "verifying", "", nil, "")
	run := e.deps.Verify(ctx)
	if ctx.Err() != nil {
		// Interrupted: no verdict; the next run checks again.
		return loop.Decision{Kind: loop.Stop, Reason: reason.Interrupted, Message: "interrupted"}, nil
	}
	claim := d
	e.st, d = loop.Checked(e.st, claim, run, e.spec.Policy)
	e.trace(loop.Trace{Check: &loop.TraceCheck{Claim: claim, Run: run, Decision: d}})
	e.emit(loop.Event{Type: loop.EventVerify, Verify: &run, Message: d.Message})
	if rec != nil {
		rec.Verify, rec.Verified, rec.Decision = &run, e.st.Verify.Verified, d.Label()
		return d, nil
	}
	return d, e.retry(ctx, "saving the state", func() error { return e.save(nil) })
}
