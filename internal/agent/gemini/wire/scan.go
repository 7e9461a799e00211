package wire

import (
	"strings"
	"unsafe"

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

// Reads reports whether the Scanner reads events of type typ; line is the
// whole event, which tells a "result" of Gemini CLI's from Claude Code's.
func Reads(typ, line []byte) bool {
	switch string(typ) {
	case "init", "message", "tool_use", "tool_result", "error":
		return true
	case "result":
		return IsResult(line)
	}
	return false
}

// IsResult reports whether a "result" event is Gemini CLI's: it carries
// stats, and neither a result text nor a usage (Claude Code's carries
// those).
func IsResult(line []byte) bool {
	var m members
	return m.parse(line) && m.stats != nil && !m.hasResult && m.usage == nil
}

// members holds the members of one event or document that facts come
// from. Raw members alias the input and are valid only while it is read.
type members struct {
	sessionID, role, status, toolName, content []byte
	delta, hasResult, hasResponse              bool
	errorStr, response                         string

	errorRaw, message, params, output, stats, usage []byte
}

func (m *members) parse(b []byte) bool {
	s := jsonscan.New(b)
	err := s.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "session_id", "sessionId":
			m.sessionID, err = s.StringBytes()
		case "role":
			m.role, err = s.StringBytes()
		case "status":
			if s.Peek() == jsonscan.String {
				m.status, err = s.StringBytes()
			}
		case "tool_name":
			m.toolName, err = s.StringBytes()
		case "content":
			if s.Peek() == jsonscan.String {
				m.content, err = s.StringBytes()
			} else {
				err = s.Skip()
			}
		case "delta":
			m.delta, err = s.Bool()
		case "error":
			if s.Peek() == jsonscan.String {
				m.errorStr, err = s.String()
			} else {
				m.errorRaw, err = s.Raw()
			}
		case "message":
			m.message, err = s.Raw()
		case "parameters":
			m.params, err = s.Raw()
		case "output":
			m.output, err = s.Raw()
		case "stats":
			m.stats, err = s.Raw()
		case "response":
			if s.Peek() == jsonscan.String {
				m.response, err = s.String()
				m.hasResponse = true
			}
		case "result":
			if s.Peek() == jsonscan.String {
				m.hasResult = true
				_, err = s.StringBytes()
			}
		case "usage":
			m.usage, err = s.Raw()
		}
		return err
	})
	return err == nil && s.AtEnd()
}

// Event reads one event of a type the Scanner reads (Reads); line is the
// whole event. It reports whether the line was a well-formed event: one
// that is not gives no facts.
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
			f.TextDelta(view(m.content))
		} else {
			f.Text("", view(m.content))
		}
	case "tool_use":
		cmd, path := activity.CommandAndPath(m.params)
		f.Tool(view(m.toolName), cmd, path)
	case "tool_result":
		if string(m.status) != "error" {
			break
		}
		if s := jsonscan.New(m.output); s.Peek() == jsonscan.String {
			if out, _ := s.String(); out != "" {
				f.ToolFailed(out)
			}
		}
		if msg := jsonscan.StringMember(m.errorRaw, "message"); msg != "" {
			f.ToolFailed(msg)
		}
	case "error":
		msg := m.errorStr
		if s := jsonscan.New(m.message); m.message != nil && s.Peek() == jsonscan.String {
			msg, _ = s.String()
		}
		if msg == "" {
			msg = jsonscan.StringMember(m.errorRaw, "message")
		}
		f.Error(msg)
	case "result":
		if string(m.status) == "error" {
			f.Failed()
			f.Error(jsonscan.StringMember(m.errorRaw, "message"))
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
	if m.errorRaw != nil {
		msg := jsonscan.StringMember(m.errorRaw, "message")
		if st := jsonscan.StringMember(m.errorRaw, "status"); st != "" && !strings.Contains(msg, st) {
			msg = st + ": " + msg
		}
		sc.f.Failed()
		sc.f.Error(msg)
		if jsonscan.NumberMember(m.errorRaw, "code") == 429 {
			sc.f.QuotaError(msg, string(m.errorRaw))
		}
	}
}

// view is b as a string without a copy, valid while b is: what the facts
// are handed lives only as long as the call (see activity.Facts).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
