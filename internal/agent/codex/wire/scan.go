package wire

import (
	"bytes"

	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

// Scanner reads the events of `codex exec --json` for the facts the
// analyzer judges (activity.Facts). It never decodes a whole event: a
// streaming scan picks the members facts come from and skips the rest —
// commands' output, file contents — with a byte search, so a long
// transcript is read fast and in flat memory.
type Scanner struct {
	f activity.Facts
}

// NewScanner returns a scanner that hands its facts to f.
func NewScanner(f activity.Facts) *Scanner { return &Scanner{f: f} }

// Reads reports whether the Scanner reads events of type typ: the
// thread, turn and item events, and "error" (which Gemini CLI's stream
// writes the same way).
func Reads(typ []byte) bool {
	return bytes.HasPrefix(typ, []byte("thread.")) || bytes.HasPrefix(typ, []byte("turn.")) ||
		bytes.HasPrefix(typ, []byte("item.")) || string(typ) == "error"
}

// members holds the members of one event that facts come from. Raw
// members alias the line and are valid only while it is read.
type members struct {
	threadID                       []byte
	errorStr                       string
	item, usage, errorRaw, message []byte
}

func (m *members) parse(b []byte) bool {
	s := jsonscan.New(b)
	err := s.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "thread_id":
			m.threadID, err = s.StringBytes()
		case "item":
			m.item, err = s.Raw()
		case "usage":
			m.usage, err = s.Raw()
		case "error":
			if s.Peek() == jsonscan.String {
				m.errorStr, err = s.String()
			} else {
				m.errorRaw, err = s.Raw()
			}
		case "message":
			m.message, err = s.Raw()
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
	switch string(typ) {
	case "thread.started":
		if len(m.threadID) > 0 {
			sc.f.Session(m.threadID)
		}
	case "item.completed":
		sc.item(m.item)
	case "turn.completed":
		var u activity.Usage
		activity.ScanUsage(m.usage, &u)
		sc.f.Usage(u, true)
	case "turn.failed":
		sc.f.Failed()
		if msg := jsonscan.StringMember(m.errorRaw, "message"); msg != "" {
			sc.f.Error(msg)
		}
	case "error":
		sc.f.Error(errorText(m.errorStr, m.message, m.errorRaw))
	}
	return true
}

// errorText is what an error event says: its message, else its error as a
// string or an object with a message.
func errorText(errorStr string, message, errorRaw []byte) string {
	msg := errorStr
	if message != nil {
		if s := jsonscan.New(message); s.Peek() == jsonscan.String {
			msg, _ = s.String()
		}
	}
	if msg == "" {
		msg = jsonscan.StringMember(errorRaw, "message")
	}
	return msg
}

// maxFailedOutput is how much of a failed command's output is held: its
// head is what may say what went wrong.
const maxFailedOutput = 16 << 10

// item reads a completed item: the agent's message, a command (and its
// output when it failed), the files a change touched, other tool calls.
func (sc *Scanner) item(raw []byte) {
	if len(raw) == 0 {
		return
	}
	var typ, text, command string
	var output []byte
	var exitCode float64
	var hasExit bool
	var changes []byte
	s := jsonscan.New(raw)
	_ = s.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			typ, err = s.String()
		case "text", "message":
			if s.Peek() == jsonscan.String {
				text, err = s.String()
			}
		case "command":
			if s.Peek() == jsonscan.String {
				command, err = s.String()
			}
		case "aggregated_output":
			// Copied only when the exit code says the command failed.
			if s.Peek() == jsonscan.String {
				output, err = s.StringBytes()
				if len(output) > maxFailedOutput {
					output = output[:maxFailedOutput]
				}
			}
		case "exit_code":
			if s.Peek() == jsonscan.Number {
				hasExit = true
				exitCode, err = s.Number()
			}
		case "changes":
			changes, err = s.Raw()
		}
		return err
	})
	switch typ {
	case "agent_message":
		sc.f.Text("", text)
	case "command_execution":
		sc.f.Tool("shell", command, "")
		if hasExit && exitCode != 0 {
			sc.f.ToolFailed(string(output))
		}
	case "file_change":
		n := 0
		jsonscan.EachObject(changes, func(s *jsonscan.Scanner) {
			_ = s.Object(func(k []byte) error {
				if string(k) == "path" {
					p, _ := s.String()
					sc.f.Tool("file_change", "", p)
					n++
				}
				return nil
			})
		})
		if n == 0 {
			sc.f.Tool("file_change", "", "")
		}
	case "mcp_tool_call", "web_search":
		sc.f.Tool(typ, "", "")
	}
}
