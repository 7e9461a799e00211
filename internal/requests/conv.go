package requests

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"ralph/internal/redact"
	"ralph/internal/serve"
)

// conversation is where a request talks back: the issue's comments or the
// Slack thread. Post is idempotent through marker (a hidden tag the
// message carries and a repeat looks for); it returns the message's
// reference (a comment id, a message ts) for Edit.
type conversation interface {
	Post(ctx context.Context, r Request, marker, text string) (string, error)
	Edit(ctx context.Context, r Request, ref, marker, text string) error
}

func (s *Service) conv(r Request) conversation {
	if s.convFor != nil {
		return s.convFor(r)
	}
	if r.Source == "slack" && s.slack != nil {
		return s.slack
	}
	return issueConv{h: s.hub}
}

// issueConv talks in a GitHub issue's comments.
type issueConv struct{ h *hub }

func (c issueConv) Post(ctx context.Context, r Request, marker, text string) (string, error) {
	id, err := c.h.Comment(ctx, r.Repo, r.Number, marker, redact.String(text))
	return strconv.FormatInt(id, 10), err
}

func (c issueConv) Edit(ctx context.Context, r Request, ref, marker, text string) error {
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		return fmt.Errorf("status comment %q: %w", ref, err)
	}
	return c.h.EditComment(ctx, r.Repo, id, redact.String(text)+"\n\n"+marker)
}

func clarifyText(questions []string) string {
	var b strings.Builder
	b.WriteString("❓ Before I go on I need a few answers:\n\n")
	for i, q := range questions {
		fmt.Fprintf(&b, "%d. %s\n", i+1, strings.TrimSpace(q))
	}
	b.WriteString("\nReply here; your reply resumes the work where it stopped.")
	return b.String()
}

// remindText repeats the pending questions, briefly, after waited.
func remindText(questions []string, waited time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "⏰ Reminder: this request has waited %s for your answer to:\n\n", waitedText(waited))
	for i, q := range questions {
		q = strings.Join(strings.Fields(q), " ")
		if r := []rune(q); len(r) > 200 {
			q = string(r[:200]) + "…"
		}
		fmt.Fprintf(&b, "%d. %s\n", i+1, q)
	}
	b.WriteString("\nReply here to answer; your reply resumes the work. Nothing runs until then.")
	return b.String()
}

func waitedText(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	default:
		return d.Round(time.Minute).String()
	}
}

func haltText(d Decision, v serve.TaskView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "⛔ Halted after %d loop(s): %s.", v.LoopCount, d.Reason)
	if errs := v.CircuitBreaker.ErrorHistory; len(errs) > 0 {
		b.WriteString("\n\nRecent errors:\n")
		for _, e := range errs {
			fmt.Fprintf(&b, "- `%s`\n", strings.ReplaceAll(e, "`", "'"))
		}
	}
	b.WriteString(summaryLine(d.Summary))
	b.WriteString("\n\nTo unblock it: add what is missing (an answer, a clearer description, a fix to the environment) in this thread, then reply `/ralph retry` — the breaker is reset and the work resumes with everything so far.")
	return b.String()
}

func summaryLine(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return ""
	}
	return "\n\nLast word from the agent: " + s
}

// statusText is the request's status message, edited in place.
func statusText(r Request, v serve.TaskView, d Decision) string {
	state := map[Outcome]string{Retry: "working", Clarify: "waiting for your answer", Complete: "pull request ready",
		Halt: "halted", Ended: "cancelled", Review: WaitingForReview, Gate: "waiting for you inside the call (see below)"}[d.Outcome]
	switch {
	case d.Outcome == Retry && v.State == "queued":
		state = "queued"
	case r.PRState == prMerged && v.State.Finished():
		state = "pull request merged"
	case r.PRState == prClosed && v.State.Finished():
		state = "pull request closed"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "🤖 **ralph** — %s\n\n", state)
	fmt.Fprintf(&b, "- branch: `%s`\n- loops: %d\n- circuit breaker: %s\n", r.Branch, v.LoopCount, v.CircuitBreaker.State)
	if r.PRURL != "" {
		fmt.Fprintf(&b, "- pull request: %s\n", r.PRURL)
	}
	if r.Rounds > 0 {
		fmt.Fprintf(&b, "- follow-up rounds: %d\n", r.Rounds)
	}
	if v.Summary != "" {
		fmt.Fprintf(&b, "- last step: %s\n", v.Summary)
	}
	return b.String()
}
