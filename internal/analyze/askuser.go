package analyze

import (
	"fmt"
	"strings"
)

// An unattended agent is refused the tool it asks the person questions
// with (Claude Code's AskUserQuestion): the refusal holds the questions.
// Those are questions to the person, so they count as a request for
// clarification (the loop waits for an answer), not as a refused tool
// that ALLOWED_TOOLS should let through.

// maxAsked bounds the questions kept from one output.
const maxAsked = 20

// Question implements activity.Facts. A question with options keeps their
// labels, so the person can answer with one of them.
func (c *collector) Question(tool, text string, options []string) {
	c.settle()
	if c.askTool == "" {
		c.askTool = strings.Clone(tool)
	}
	q := strings.Join(strings.Fields(text), " ")
	if q != "" && len(options) > 0 {
		q += " (" + strings.Join(options, " / ") + ")"
	}
	c.addAskedQuestion(strings.Clone(clip(q, maxErrorText)))
}

func (c *collector) addAskedQuestion(q string) {
	if q == "" || len(c.asked) >= maxAsked {
		return
	}
	for _, have := range c.asked {
		if have == q {
			return
		}
	}
	c.asked = append(c.asked, q)
}

// applyAsked makes the refused questions the analysis's clarification
// questions, after any the status block names.
func (c *collector) applyAsked(a *Analysis) {
	if len(c.asked) == 0 {
		return
	}
	a.ClarificationNeeded = true
	if a.Status == StatusUnknown {
		a.Status = StatusNeedsClarification
	}
	for _, q := range c.asked {
		dup := false
		for _, have := range a.ClarificationQuestions {
			dup = dup || have == q
		}
		if !dup {
			a.ClarificationQuestions = append(a.ClarificationQuestions, q)
		}
	}
	a.Warnings = append(a.Warnings, fmt.Sprintf("the agent asked %d question(s) with %s, which an unattended agent is refused: read as a request for clarification", len(c.asked), c.askTool))
}
