package loop

import (
	"fmt"
	"strings"

	"ralph/internal/breaker"
)

// MaxContext bounds the loop context appended to the agent's system prompt:
// it rides along on every call, so it must stay small.
const MaxContext = 500

// ContextInput is what the next call is told about the loop.
type ContextInput struct {
	Loop        int
	PlanKnown   bool
	PlanOpen    int
	PlanTotal   int
	NextTask    string
	Breaker     breaker.Status
	BreakerNote string
	LastSummary string
	Corrections []string
}

// BuildContext renders the loop context, most important first, within
// MaxContext bytes: what contradicts the agent comes before where it is.
func BuildContext(in ContextInput) string {
	parts := []string{fmt.Sprintf("[ralph loop %d]", in.Loop)}
	parts = append(parts, in.Corrections...)
	if in.PlanKnown && in.PlanTotal > 0 {
		p := fmt.Sprintf("fix_plan.md: %d of %d tasks open", in.PlanOpen, in.PlanTotal)
		if in.NextTask != "" {
			p += "; next: " + in.NextTask
		}
		parts = append(parts, p+".")
	}
	if in.Breaker != "" && in.Breaker != breaker.Closed {
		b := "Circuit breaker " + string(in.Breaker)
		if in.BreakerNote != "" {
			b += ": " + in.BreakerNote
		}
		parts = append(parts, b+". Make concrete progress this time.")
	}
	if in.LastSummary != "" {
		parts = append(parts, "Previous iteration: "+in.LastSummary)
	}
	var b strings.Builder
	for _, p := range parts {
		p = strings.Join(strings.Fields(p), " ")
		sep := 0
		if b.Len() > 0 {
			sep = 1
		}
		room := MaxContext - b.Len() - sep
		if room < 20 {
			break
		}
		if sep == 1 {
			b.WriteByte(' ')
		}
		if len(p) > room {
			p = cut(p, room-len("…")) + "…"
		}
		b.WriteString(p)
	}
	return b.String()
}

// AnswerSection is what the prompt of the call after a question adds: the
// questions and the person's answer ("" when none was given). It is not
// part of the loop context, which MaxContext keeps far smaller than an
// answer may be.
func AnswerSection(a Ask) string {
	if a.Answer == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n## Answers to your questions\n\nYou asked a person (loop %d); they answered:\n\n", a.Loop)
	for _, q := range a.Questions {
		fmt.Fprintf(&b, "Q: %s\n", strings.TrimSpace(q))
	}
	fmt.Fprintf(&b, "A: %s\n", strings.TrimSpace(a.Answer))
	return b.String()
}

// cut shortens s to at most n bytes without splitting a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
