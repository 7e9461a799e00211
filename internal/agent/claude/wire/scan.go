package wire

import (
	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

// Scanner reads Claude Code's output for the facts the analyzer judges
// (activity.Facts). It never decodes a whole event: a streaming scan picks
// the members facts come from and skips the rest — tool results, file
// contents — with a byte search, so a long transcript is read at the speed
// of that search and in flat memory.
type Scanner struct {
	f activity.Facts
	// text is the buffer an assistant text block is decoded into, reused:
	// the agent's words are most of what is decoded at all.
	text []byte
	seen map[string]bool // results already counted, by uuid
}

// NewScanner returns a scanner that hands its facts to f.
func NewScanner(f activity.Facts) *Scanner { return &Scanner{f: f, seen: map[string]bool{}} }

// Event reads one event of a type the Scanner reads (Reads); line is the
// whole event. It reports whether the line was a well-formed event: one
// that is not gives no facts.
func (sc *Scanner) Event(typ, line []byte) bool {
	var m members
	if !m.parse(line) {
		return false
	}
	switch string(typ) {
	case "system":
		if len(m.sessionID) > 0 {
			sc.f.SessionHint(m.sessionID)
		}
	case "assistant":
		sc.assistant(&m)
	case "user":
		sc.user(&m)
	case "result":
		sc.result(&m)
	case "rate_limit_event":
		sc.rateLimit(m.rateLimit)
	}
	return true
}

// Document reads an output that is one object without a type: the older
// json output, a result. It reports whether the object was one.
func (sc *Scanner) Document(b []byte) bool {
	var m members
	if !m.parse(b) || !m.hasResult && !m.hasIsError && m.usage == nil {
		return false
	}
	sc.result(&m)
	return true
}

func (sc *Scanner) assistant(m *members) {
	if len(m.sessionID) > 0 {
		sc.f.SessionHint(m.sessionID)
	}
	if m.apiError == "usage_limit_reached" || m.errorStr == "rate_limit" {
		sc.f.LimitReached()
	}
	id, usage := walkMessage(m.message, &sc.text, func(id []byte, b block) {
		switch string(b.typ) {
		case "text":
			sc.f.Text(activity.View(id), activity.View(b.text))
		case "tool_use", "server_tool_use":
			cmd, path := activity.CommandAndPath(b.input)
			sc.f.Tool(b.name, cmd, path)
		}
	})
	if len(id) > 0 && usage != nil {
		var u activity.Usage
		activity.ScanUsage(usage, &u)
		sc.f.MessageUsage(activity.View(id), u)
	}
}

// user looks only at tool results that failed: their head may hold the
// error the agent is stuck on. Everything else in a user event is an echo.
// (Inside a string a quote is escaped, so an "is_error" key found while
// skipping the message is a key: see members.mayFail.)
func (sc *Scanner) user(m *members) {
	if len(m.message) == 0 || !m.mayFail {
		return
	}
	s := jsonscan.New(m.message)
	_ = s.Object(func(k []byte) error {
		if string(k) != "content" || s.Peek() != jsonscan.Array {
			return nil
		}
		return s.Array(func(int) error {
			return eachToolResult(s, func(failed bool, content []byte) {
				if failed {
					sc.f.ToolFailed(contentText(content))
				}
			})
		})
	})
}

// eachToolResult reads the content block s is at and calls fn when it is a
// tool result, with whether it failed and its raw content. Any other
// value is skipped.
func eachToolResult(s *jsonscan.Scanner, fn func(failed bool, content []byte)) error {
	if s.Peek() != jsonscan.Object {
		return s.Skip()
	}
	var typ string
	var failed bool
	var content []byte
	err := s.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			typ, err = s.String()
		case "is_error":
			failed, err = s.Bool()
		case "content":
			content, err = s.Raw()
		}
		return err
	})
	if typ == "tool_result" {
		fn(failed, content)
	}
	return err
}
