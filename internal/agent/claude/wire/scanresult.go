package wire

import (
	"strings"
	"time"

	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

// contentText reads a tool result's content: a string or text blocks.
func contentText(raw []byte) string {
	if t, ok := jsonscan.StringValue(raw); ok {
		return t
	}
	var b strings.Builder
	jsonscan.EachObject(raw, func(s *jsonscan.Scanner) {
		_ = s.Object(func(k []byte) error {
			if string(k) == "text" && s.Peek() == jsonscan.String {
				t, _ := s.String()
				b.WriteString(t)
				b.WriteByte('\n')
			}
			return nil
		})
	})
	return b.String()
}

// result reads the event that ends the output: how the call ended, what
// it cost, the tools refused, the errors and the final answer.
func (sc *Scanner) result(m *members) {
	f := sc.f
	f.Result(m.isError, m.hasIsError && !m.isError)
	if len(m.sessionID) > 0 {
		f.Session(m.sessionID)
	}
	if m.apiError == "usage_limit_reached" {
		f.LimitReached()
	}
	if m.apiErrorStatus == 429 {
		f.Limit429()
	}
	// A resumed transcript may repeat a result: it is counted once.
	key := string(m.uuid)
	dup := key != "" && sc.seen[key]
	if key != "" {
		sc.seen[key] = true
	}
	if !dup {
		var u activity.Usage
		tokens := false
		switch {
		case m.usage != nil:
			activity.ScanUsage(m.usage, &u)
			tokens = true
		case m.modelUsage != nil: // per model only: summed over the models
			modelUsage(m.modelUsage, &u)
			tokens = true
		case m.metadata != nil: // a wrapper's result: {"metadata": {"usage": {…}}}
			if raw := jsonscan.Member(m.metadata, "usage"); raw != nil {
				activity.ScanUsage(raw, &u)
				tokens = true
			}
		}
		if m.cost != 0 || u.CostUSD == 0 {
			u.CostUSD = m.cost
		}
		f.Usage(u, tokens)
	}
	Denials(m.denials, f)
	jsonscan.EachString(m.errors, f.ErrorNote)
	if m.hasResult {
		f.ResultText(m.result, m.isError)
	}
}

// askUserTool is Claude Code's question tool. An unattended agent (`-p`)
// is refused it: the refusal lands in the result's permission_denials with
// the questions in its tool_input. Those are questions to the person, not
// a tool to allow.
const askUserTool = "AskUserQuestion"

// Denials reads a result's permission_denials: {tool_name, tool_input} —
// or, in the older shape, {tool, command} — for each call refused, and the
// questions of a refused AskUserQuestion. A refused question is never
// dropped, whatever the shape of its input: when no question can be read
// from it, the person is still told one was asked.
func Denials(raw []byte, f activity.Facts) {
	jsonscan.EachObject(raw, func(s *jsonscan.Scanner) {
		var tool, command string
		var input []byte
		_ = s.Object(func(k []byte) error {
			switch string(k) {
			case "tool_name", "tool":
				tool, _ = s.String()
			case "command":
				command, _ = s.String()
			case "tool_input", "input":
				input, _ = s.Raw()
			}
			return nil
		})
		if tool == askUserTool {
			if questions(input, f) == 0 {
				text := strings.TrimSpace(command)
				if text == "" {
					text = "the agent asked a question with " + askUserTool + " that ralph could not read"
				}
				f.Question(askUserTool, text, nil)
			}
			return
		}
		if cmd, _ := activity.CommandAndPath(input); cmd != "" {
			command = cmd
		}
		if tool != "" {
			f.Denied(tool, command)
		}
	})
}

// questions reads the input of a refused AskUserQuestion call and returns
// how many questions it handed on. The CLI's shape is
// {"questions":[{"question":"…","header":"…","options":[{"label":"…"}]}]};
// also read: the input as a JSON string, a single {"question": …}, questions
// or options as plain strings, and a plain string as the question itself.
func questions(input []byte, f activity.Facts) int {
	if len(input) == 0 {
		return 0
	}
	if str, ok := jsonscan.StringValue(input); ok {
		if t := strings.TrimSpace(str); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			return questions([]byte(t), f)
		}
		if t := strings.TrimSpace(str); t != "" {
			f.Question(askUserTool, t, nil)
			return 1
		}
		return 0
	}
	s := jsonscan.New(input)
	if s.Peek() != jsonscan.Object {
		return 0
	}
	n := 0
	_ = s.Object(func(k []byte) error {
		switch {
		case string(k) == "questions" && s.Peek() == jsonscan.Array:
			return s.Array(func(int) error {
				if s.Peek() == jsonscan.String {
					text, err := s.String()
					if strings.TrimSpace(text) != "" {
						f.Question(askUserTool, text, nil)
						n++
					}
					return err
				}
				if s.Peek() != jsonscan.Object {
					return s.Skip()
				}
				if one(s, f) {
					n++
				}
				return nil
			})
		case string(k) == "question" && s.Peek() == jsonscan.String:
			text, err := s.String()
			if strings.TrimSpace(text) != "" {
				f.Question(askUserTool, text, nil)
				n++
			}
			return err
		}
		return nil
	})
	return n
}

// one reads one {"question", "options"} object and hands it on.
func one(s *jsonscan.Scanner, f activity.Facts) bool {
	var text string
	var labels []string
	_ = s.Object(func(k []byte) error {
		switch {
		case string(k) == "question" && s.Peek() == jsonscan.String:
			text, _ = s.String()
		case string(k) == "options":
			labels = optionLabels(s)
		}
		return nil
	})
	if strings.TrimSpace(text) == "" {
		return false
	}
	f.Question(askUserTool, text, labels)
	return true
}

// optionLabels consumes an options array and returns its labels.
func optionLabels(s *jsonscan.Scanner) []string {
	var out []string
	if s.Peek() != jsonscan.Array {
		return nil
	}
	_ = s.Array(func(int) error {
		if s.Peek() == jsonscan.String {
			l, err := s.String()
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
			return err
		}
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

// modelUsage adds up a result's modelUsage: {model: {inputTokens,
// outputTokens, cacheReadInputTokens, cacheCreationInputTokens, costUSD}}.
func modelUsage(raw []byte, u *activity.Usage) {
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Object {
		return
	}
	_ = s.Object(func([]byte) error {
		per, err := s.Raw()
		activity.ScanUsage(per, u) // it reads the camel-case names too
		return err
	})
}

// rateLimit reads a rate_limit_event: only a rejection is a fact, with
// when the limit resets and its kind.
func (sc *Scanner) rateLimit(raw []byte) {
	for _, w := range windowsUsed(raw) {
		sc.f.WindowUsed(w.kind, w.used, w.resetsAt)
	}
	status, kind, resets := rateLimitInfo(raw)
	if status != "rejected" {
		return
	}
	var at time.Time
	if resets > 0 {
		if resets > 1e12 { // milliseconds
			resets /= 1000
		}
		at = time.Unix(int64(resets), 0).UTC()
	}
	sc.f.LimitRejected(at, kind)
}

// rateLimitInfo reads a rate_limit_event's rate_limit_info: its status,
// the kind of limit, and when it resets (as the event gives it).
func rateLimitInfo(raw []byte) (status, kind string, resets float64) {
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Object {
		return "", "", 0
	}
	_ = s.Object(func(k []byte) error {
		switch string(k) {
		case "status":
			status, _ = s.String()
		case "resetsAt":
			resets, _ = s.Number()
		case "rateLimitType":
			kind, _ = s.String()
		}
		return nil
	})
	return status, kind, resets
}
