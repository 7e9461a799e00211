package wire

import (
	"unsafe"

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

// Reads reports whether the Scanner reads events of type typ: those of
// stream-json, and the result that ends it and is the whole json output.
// (Gemini CLI's stream ends with a "result" too: see the gemini wire
// package's IsResult.)
func Reads(typ []byte) bool {
	switch string(typ) {
	case "system", "assistant", "user", "result", "rate_limit_event",
		"stream_event", "tool_progress", "control_request", "control_response", "keep_alive":
		return true
	}
	return false
}

// members holds the members of one event that facts come from. Raw
// members alias the line and are valid only while it is read.
type members struct {
	sessionID, uuid     []byte
	apiError, errorStr  string
	result              string
	hasResult           bool
	isError, hasIsError bool
	// mayFail: the message has an "is_error" member whose value is not
	// false, so a tool result in it may have failed (user events).
	mayFail        bool
	cost           float64
	apiErrorStatus int

	message, usage, modelUsage, denials, errors, rateLimit []byte
}

func (m *members) parse(b []byte) bool {
	s := jsonscan.New(b)
	err := s.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "session_id", "sessionId":
			m.sessionID, err = s.StringBytes()
		case "uuid":
			m.uuid, err = s.StringBytes()
		case "api_error":
			if s.Peek() == jsonscan.String {
				m.apiError, err = s.String()
			}
		case "error":
			if s.Peek() == jsonscan.String {
				m.errorStr, err = s.String()
			} else {
				err = s.Skip()
			}
		case "result":
			if s.Peek() == jsonscan.String {
				m.result, err = s.String()
				m.hasResult = true
			}
		case "is_error":
			m.hasIsError = true
			m.isError, err = s.Bool()
		case "total_cost_usd", "cost_usd":
			m.cost, err = s.Number()
		case "api_error_status":
			var f float64
			f, err = s.Number()
			m.apiErrorStatus = int(f)
		case "usage":
			m.usage, err = s.Raw()
		case "modelUsage":
			m.modelUsage, err = s.Raw()
		case "permission_denials":
			m.denials, err = s.Raw()
		case "errors":
			m.errors, err = s.Raw()
		case "message":
			// The one pass over a user event's tool results notes whether
			// one may have failed; most did not, and are not read again.
			m.message, m.mayFail, err = s.RawFind("is_error", notFalse)
		case "rate_limit_info":
			m.rateLimit, err = s.Raw()
		}
		return err
	})
	return err == nil && s.AtEnd()
}

// notFalse accepts the first byte of any value but false.
func notFalse(first byte) bool { return first != 'f' }

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
	if len(m.message) == 0 {
		return
	}
	var id []byte
	var usage []byte
	s := jsonscan.New(m.message)
	_ = s.Object(func(k []byte) error {
		switch string(k) {
		case "id":
			id, _ = s.StringBytes()
		case "usage":
			usage, _ = s.Raw()
		case "content":
			if s.Peek() == jsonscan.String { // older shape: plain string content
				_ = sc.decodeText(s)
				sc.f.Text(view(id), view(sc.text))
				return nil
			}
			return s.Array(func(int) error { return sc.block(s, view(id)) })
		}
		return nil
	})
	if len(id) > 0 && usage != nil {
		var u activity.Usage
		activity.ScanUsage(usage, &u)
		sc.f.MessageUsage(view(id), u)
	}
}

// block reads one content block of an assistant message.
func (sc *Scanner) block(s *jsonscan.Scanner, msgID string) error {
	if s.Peek() != jsonscan.Object {
		return s.Skip()
	}
	var typ []byte
	var name string
	var input []byte
	sc.text = sc.text[:0]
	err := s.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			typ, err = s.StringBytes()
		case "text":
			err = sc.decodeText(s)
		case "name":
			name, err = s.String()
		case "input":
			input, err = s.Raw()
		}
		return err
	})
	switch string(typ) {
	case "text":
		sc.f.Text(msgID, view(sc.text))
	case "tool_use", "server_tool_use":
		cmd, path := activity.CommandAndPath(input)
		sc.f.Tool(name, cmd, path)
	}
	return err
}

// decodeText decodes the string value s is at into sc.text; on an error
// sc.text is empty, as String would return it.
func (sc *Scanner) decodeText(s *jsonscan.Scanner) error {
	if cap(sc.text) > 1<<20 {
		sc.text = nil // one long message does not stay held
	}
	var err error
	sc.text, err = s.AppendString(sc.text[:0])
	return err
}

// view is b as a string without a copy, valid while b is: what the facts
// are handed lives only as long as the call (see activity.Facts).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
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
			if typ == "tool_result" && failed {
				sc.f.ToolFailed(contentText(content))
			}
			return err
		})
	})
}
