package requests

import (
	"fmt"
	"strings"

	"ralph/internal/loop"
	"ralph/internal/serve"
)

// check is what the verify gate made of a request's last completion claim:
// run is nil where no check ran (no VERIFY_CMD, or no claim yet).
type check struct {
	run      *loop.VerifyRun
	verified bool
}

func lastCheck(v serve.TaskView) check {
	for i := len(v.History) - 1; i >= 0; i-- {
		if h := v.History[i]; h.Verify != nil {
			return check{run: h.Verify, verified: h.Verified}
		}
	}
	return check{}
}

// failed reports a check that ran and did not pass.
func (c check) failed() bool { return c.run != nil && !c.verified }

// prBody is a pull request's body: what it closes (or the Slack thread it
// was asked in, by its permalink where thread has one), whether ralph's own
// check passed (the failing output where it did not), and a receipt of
// the work — loops, cost, the agent's last word — plus why it stopped
// when a cap or a halt ended it short.
func prBody(r Request, thread string, v serve.TaskView, dec Decision, c check, stopped string) string {
	var b strings.Builder
	switch {
	case r.Source == "github":
		fmt.Fprintf(&b, "Closes #%d", r.Number)
	case thread != "":
		fmt.Fprintf(&b, "Requested in Slack: %s", thread)
	default:
		fmt.Fprintf(&b, "Requested in Slack: channel %s, thread %s.", r.Channel, r.Thread)
	}
	if stopped != "" {
		fmt.Fprintf(&b, "\n\n**Draft: the work stopped before it was done** — %s. What the agent left is committed here so that a person, or `/ralph retry` in the thread, can pick it up.", stopped)
	}
	switch {
	case c.verified:
		fmt.Fprintf(&b, "\n\n**Verified:** ralph ran `%s` itself and it passed.", c.run.Command)
	case c.failed():
		fmt.Fprintf(&b, "\n\n**Draft:** ralph ran `%s` itself and it %s:\n\n```\n%s\n```", c.run.Command, c.run.Outcome(), fence(c.run.Tail))
	case dec.TestsFailing:
		b.WriteString("\n\n**Draft:** the agent reported the project's tests failing (`TESTS_STATUS: FAILING`) on its last iteration.")
	}
	if dec.Summary != "" {
		b.WriteString("\n\n" + dec.Summary)
	}
	fmt.Fprintf(&b, "\n\n| loops | cost | verified |\n|---|---|---|\n| %d | $%.2f | %s |", v.LoopCount, v.CostUSD, verifiedCell(c))
	b.WriteString("\n\n_Opened by ralph (" + r.Branch + ")._")
	return b.String()
}

func verifiedCell(c check) string {
	switch {
	case c.verified:
		return "yes"
	case c.failed():
		return "no (" + c.run.Outcome() + ")"
	}
	return "not checked"
}

// fence keeps a command's output inside its code block.
func fence(s string) string {
	if s == "" {
		return "(no output)"
	}
	return strings.ReplaceAll(s, "```", "'''")
}
