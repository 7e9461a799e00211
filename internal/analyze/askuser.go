package analyze

import (
	"fmt"
	"strings"

	"ralph/internal/jsonscan"
)

// askUserTool is Claude Code's question tool. An unattended agent (`-p`)
// is refused it: the refusal lands in the result's permission_denials with
// the questions in its tool_input. Those are questions to the person, so
// they count as a request for clarification (the loop waits for an
// answer), not as a refused tool that ALLOWED_TOOLS should let through.
const askUserTool = "AskUserQuestion"

// maxAsked bounds the questions kept from one output.
const maxAsked = 20

// addAsked reads the questions of a refused AskUserQuestion call:
// {"questions":[{"question":"…","header":"…","options":[{"label":"…"}]}]}.
// A question with options keeps their labels, so the person can answer
// with one of them.
func (c *collector) addAsked(input []byte) {
	if len(input) == 0 {
		return
	}
	s := jsonscan.New(input)
	if s.Peek() != jsonscan.Object {
		return
	}
	_ = s.Object(func(k []byte) error {
		if string(k) != "questions" || s.Peek() != jsonscan.Array {
			return nil
		}
		return s.Array(func(int) error {
			if s.Peek() != jsonscan.Object {
				return s.Skip()
			}
			var text string
			var labels []string
			err := s.Object(func(k []byte) error {
				switch {
				case string(k) == "question" && s.Peek() == jsonscan.String:
					text, _ = s.String()
				case string(k) == "options":
					labels = optionLabels(s)
				}
				return nil
			})
			q := strings.Join(strings.Fields(text), " ")
			if q != "" && len(labels) > 0 {
				q += " (" + strings.Join(labels, " / ") + ")"
			}
			c.addAskedQuestion(clip(q, maxErrorText))
			return err
		})
	})
}

// optionLabels consumes an options array and returns its labels.
func optionLabels(s *jsonscan.Scanner) []string {
	var out []string
	if s.Peek() != jsonscan.Array {
		return nil
	}
	_ = s.Array(func(int) error {
		if s.Peek() != jsonscan.Object {
			return s.Skip()
		}
		return s.Object(func(k []byte) error {
			if string(k) == "label" && s.Peek() == jsonscan.String {
				l, err := s.String()
				if l = strings.TrimSpace(l); l != "" {
					out = append(out, l)
				}
				return err
			}
			return nil
		})
	})
	return out
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
	a.Warnings = append(a.Warnings, fmt.Sprintf("the agent asked %d question(s) with %s, which an unattended agent is refused: read as a request for clarification", len(c.asked), askUserTool))
}
