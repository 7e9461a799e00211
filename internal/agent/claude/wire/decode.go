package wire

import (
	"fmt"
	"strings"
	"time"

	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

// Decoder turns Claude Code's output, line by line, into activity events.
type Decoder struct {
	s    *activity.Sink
	text []byte // a text block, decoded
}

// NewDecoder returns a decoder that sends its events to s. The init
// event's cwd replaces s.Dir: it is the CLI's own view of the directory
// (symlinks resolved).
func NewDecoder(s *activity.Sink) *Decoder { return &Decoder{s: s} }

// Line decodes one line of output. A line of text is shown as it is; a
// line cut short is dropped.
func (d *Decoder) Line(line []byte) {
	b, ok := d.s.Object(line)
	if !ok {
		return
	}
	var m members
	if !m.parse(b) {
		return
	}
	switch string(m.typ) {
	case "system":
		if string(m.subtype) == "init" && len(m.cwd) > 0 {
			d.s.Dir = m.cwd
		}
	case "assistant":
		d.assistant(m.message)
	case "user":
		if d.s.Results() { // tool results are not shown: spare reading them
			d.toolResults(m.message)
		}
	case "rate_limit_event":
		d.rateLimit(m.rateLimit)
	case "result":
		d.result(&m)
	}
}

// Flush implements activity.Decoder; nothing is held back.
func (d *Decoder) Flush() {}

func (d *Decoder) assistant(msg []byte) {
	walkMessage(msg, &d.text, func(_ []byte, b block) {
		switch string(b.typ) {
		case "text":
			d.s.Text(string(b.text))
		case "tool_use":
			d.s.Tool(b.name, activity.ToolTarget(b.input, d.s.Dir))
		}
	})
}

// result shows what went wrong, if anything (refused tools, the error),
// the final answer unless the last prose already said it (stream-json
// repeats it), and how the call ended.
func (d *Decoder) result(m *members) {
	jsonscan.EachObject(m.denials, func(s *jsonscan.Scanner) {
		var name string
		var input []byte
		_ = s.Object(func(k []byte) error {
			switch string(k) {
			case "tool_name":
				name, _ = s.String()
			case "tool_input":
				input, _ = s.Raw()
			}
			return nil
		})
		msg := "permission denied: " + name
		if t := activity.ToolTarget(input, d.s.Dir); t != "" {
			msg += " " + t
		}
		d.s.Error(msg)
	})
	if m.isError {
		d.s.Error(errorMessage(m))
	} else if m.hasResult && strings.TrimSpace(m.result) != strings.TrimSpace(d.s.LastText()) {
		d.s.Text(m.result)
	}
	status := string(m.subtype)
	if m.isError && (status == "" || status == "success") {
		status = "error" // API errors still say "success"
	}
	if m.hasAPIErrorStatus {
		status += fmt.Sprintf(" (%d)", m.apiErrorStatus)
	}
	var cost string
	if m.hasTotalCost {
		cost = fmt.Sprintf("$%.4f", m.totalCost)
	}
	var u activity.Usage
	activity.ScanUsage(m.usage, &u)
	d.s.Summary("result: "+status, activity.Count(int(m.numTurns), "turn"), activity.Millis(int64(m.durationMS)),
		activity.Tokens(u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens), cost)
}

// errorMessage is what a failed call says went wrong: its result, else the
// first of its errors (max turns has no result).
func errorMessage(m *members) string {
	if m.hasResult && strings.TrimSpace(m.result) != "" {
		return m.result
	}
	if s := jsonscan.New(m.errors); s.Peek() == jsonscan.Array {
		var first string
		found := false
		_ = s.Array(func(i int) error {
			if i == 0 && s.Peek() == jsonscan.String {
				found = true
				first, _ = s.String()
			}
			return nil
		})
		if found {
			return first
		}
	}
	return "the agent reported an error (" + string(m.subtype) + ")"
}

// toolResults shows each tool result of a user event; a user event whose
// content is a string is a prompt.
func (d *Decoder) toolResults(msg []byte) {
	content := jsonscan.New(nil)
	if s := jsonscan.New(msg); s.Peek() == jsonscan.Object {
		_ = s.Object(func(k []byte) error {
			if string(k) == "content" {
				raw, err := s.Raw()
				content = jsonscan.New(raw)
				return err
			}
			return nil
		})
	}
	if content.Peek() != jsonscan.Array {
		return
	}
	_ = content.Array(func(int) error {
		return eachToolResult(content, func(failed bool, out []byte) {
			failure := ""
			if failed {
				failure = "error"
			}
			d.s.Result(resultText(out), failure)
		})
	})
}

// resultText is a tool result's text: a string, or text blocks.
func resultText(raw []byte) string {
	if t, ok := jsonscan.StringValue(raw); ok {
		return t
	}
	var parts []string
	jsonscan.EachObject(raw, func(s *jsonscan.Scanner) {
		var typ, text string
		_ = s.Object(func(k []byte) error {
			switch {
			case string(k) == "type":
				typ, _ = s.String()
			case string(k) == "text" && s.Peek() == jsonscan.String:
				text, _ = s.String()
			}
			return nil
		})
		switch typ {
		case "text":
			parts = append(parts, text)
		case "image":
			parts = append(parts, "[image]")
		}
	})
	return strings.Join(parts, "\n")
}

// rateLimit shows a rate limit that bites or is about to; the routine
// "allowed" events are noise.
func (d *Decoder) rateLimit(raw []byte) {
	status, kind, resets := rateLimitInfo(raw)
	if status == "" || status == "allowed" {
		return
	}
	msg := "rate limit"
	if kind != "" {
		msg += " " + kind
	}
	msg += ": " + status
	if resets > 0 {
		msg += ", resets " + time.Unix(int64(resets), 0).UTC().Format("2006-01-02 15:04 UTC")
	}
	if status == "rejected" {
		d.s.Error(msg)
		return
	}
	d.s.Emit(activity.Event{Kind: activity.Output, Text: msg})
}
