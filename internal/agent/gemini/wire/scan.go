package wire

import (
	"strings"

	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

// Scanner reads Gemini CLI's output (stream-json events, or the json
// document) for the facts the analyzer judges (activity.Facts). It never
// decodes a whole event: a streaming scan picks the members facts come
// from and skips the rest — tool output, file contents — with a byte
// search, so a long transcript is read fast and in flat memory.
type Scanner struct {
	f activity.Facts
}

// NewScanner returns a scanner that hands its facts to f.
func NewScanner(f activity.Facts) *Scanner { return &Scanner{f: f} }

// Event reads one event of a type the Scanner reads (Reads, IsResult);
// line is the whole event. It reports whether the line was a well-formed
// event: one that is not gives no facts.
func (sc *Scanner) Event(typ, line []byte) bool {
	var m members
	if !m.parse(line) {
		return false
	}
	f := sc.f
	switch string(typ) {
	case "init":
		if len(m.sessionID) > 0 {
			f.Session(m.sessionID)
		}
	case "message":
		// The prompt comes back as a user message. The answer comes whole
		// or in deltas, which join into one message.
		if r := string(m.role); r != "assistant" && r != "model" {
			break
		}
		if m.delta {
			f.TextDelta(activity.View(m.content))
		} else {
			f.Text("", activity.View(m.content))
		}
	case "tool_use":
		cmd, path := activity.CommandAndPath(m.params)
		f.Tool(activity.View(m.toolName), cmd, path)
	case "tool_result":
		if string(m.status) != "error" {
			break
		}
		if out, _ := jsonscan.StringValue(m.output); out != "" {
			f.ToolFailed(out)
		}
		if msg := m.Error.RawMessage(); msg != "" {
			f.ToolFailed(msg)
		}
	case "error":
		f.Error(m.Error.Text())
	case "result":
		if string(m.status) == "error" {
			f.Failed()
			f.Error(m.Error.RawMessage())
		}
		sc.stats(m.stats)
	}
	return true
}

// Document reads the json output, one object without a type: the answer,
// the stats, and the API's error object ({"error": {"code": 429,
// "message": …, "status": "RESOURCE_EXHAUSTED"}}), which the CLI also
// prints at the end of its stderr.
func (sc *Scanner) Document(b []byte) {
	var m members
	if !m.parse(b) {
		return
	}
	if len(m.sessionID) > 0 {
		sc.f.Session(m.sessionID)
	}
	if m.hasResponse {
		sc.f.Answer(m.response)
	}
	if m.stats != nil {
		sc.stats(m.stats)
	}
	if m.Error.Raw != nil {
		msg := m.Error.RawMessage()
		if st := jsonscan.StringMember(m.Error.Raw, "status"); st != "" && !strings.Contains(msg, st) {
			msg = st + ": " + msg
		}
		sc.f.Failed()
		sc.f.Error(msg)
		if jsonscan.NumberMember(m.Error.Raw, "code") == 429 {
			sc.f.QuotaError(msg, string(m.Error.Raw))
		}
	}
}
