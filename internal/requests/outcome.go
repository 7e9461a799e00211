// Package requests turns GitHub issues and Slack threads into daemon tasks
// (DESIGN.md, "The fleet": Request). Each request gets a worktree of the
// target repository on branch ralph/<source>-<id> and a session of its own;
// its loop ends in a pull request, a question posted back to the thread, or
// a halt report (seed ADR-002's outcomes), and the answer in the same thread
// resumes it.
//
// Intake is idempotent and written to the request store (requests.db)
// before anything else happens; every effect (a comment, a push, a pull
// request) can be repeated without a duplicate, so a crash anywhere repeats
// nothing a person sees twice.
package requests

import (
	"strings"

	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/reason"
	"ralph/internal/serve"
)

// Outcome is what a request's loop came to (seed ADR-002).
type Outcome string

const (
	// Complete: EXIT_SIGNAL or PR_READY — push, open the pull request.
	Complete Outcome = "complete"
	// Clarify: the agent asked; post the questions and wait.
	Clarify Outcome = "clarify"
	// Retry: the loop still runs (or is queued) while it makes progress.
	Retry Outcome = "retry"
	// Halt: the breaker opened, or the loop stopped short; say why.
	Halt Outcome = "halt"
	// Ended: cancelled by hand; nothing to say.
	Ended Outcome = "ended"
	// Review: the pull request is open and waits for review (follow.go).
	Review Outcome = "review"
	// Gate: the agent waits inside its call for a decision or an answer
	// (gate.go posts each item); the call goes on once it has it.
	Gate Outcome = "gate"
)

// Decision is an outcome with what to tell the requester.
type Decision struct {
	Outcome   Outcome
	Questions []string
	// Reason is why a loop halted (the breaker's or the exit reason);
	// Summary the agent's last word on its work.
	Reason  string
	Summary string
	// TestsFailing: the last status block said TESTS_STATUS: FAILING, so a
	// pull request opens as a draft.
	TestsFailing bool
}

// Decide reads a task view: pure, so that the four ways a request ends are
// tested as a table. It decides from what the core already typed — the
// task's state and exit reason, the breaker's status, the analysis of the
// last iteration (its PR_READY and TESTS_STATUS as the analyzer read them)
// — never from the status block's strings.
func Decide(v serve.TaskView) Decision {
	d := Decision{Summary: v.Summary}
	var last serve.HistoryItem
	if n := len(v.History); n > 0 {
		last = v.History[n-1]
	}
	d.TestsFailing = last.TestsStatus == analyze.TestsFailing
	switch {
	case v.State == fleet.Running || v.State == fleet.Queued:
		d.Outcome = Retry
	case v.State == fleet.Cancelled:
		d.Outcome = Ended
	case v.State == fleet.Waiting && len(v.Pending) > 0:
		d.Outcome = Gate
	case v.State == fleet.Waiting && len(v.Questions) > 0:
		d.Outcome, d.Questions = Clarify, v.Questions
	case v.State == fleet.Waiting && v.Message == WaitingForReview:
		d.Outcome = Review
	case v.State == fleet.Done:
		d.Outcome = Complete
	case last.PRReady && v.State == fleet.Waiting:
		// PR_READY on the last iteration: the work is ready for review
		// even though the loop ran out of budget before saying it is done.
		d.Outcome = Complete
	default:
		d.Outcome = Halt
		d.Reason = haltReason(v)
	}
	return d
}

func haltReason(v serve.TaskView) string {
	why := strings.TrimSpace(v.Message)
	if r := reason.Reason(v.ExitReason); r != "" {
		why = strings.TrimSuffix(string(r)+": "+why, ": ")
	}
	switch {
	case breaker.Status(v.CircuitBreaker.State) == breaker.Open && v.CircuitBreaker.Reason != "":
		return "circuit breaker open: " + v.CircuitBreaker.Reason
	case why != "":
		return why
	}
	return "the loop stopped"
}
