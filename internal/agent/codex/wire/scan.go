package wire

import (
	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

// Scanner reads the events of `codex exec --json` for the facts the
// analyzer judges (activity.Facts). It never decodes a whole event: the
// scan skips commands' output, file contents, with a byte search unless a
// fact is in them, so a long transcript is read fast and in flat memory.
type Scanner struct {
	f activity.Facts
}

// NewScanner returns a scanner that hands its facts to f.
func NewScanner(f activity.Facts) *Scanner { return &Scanner{f: f} }

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
		var it itemMembers
		it.parse(m.item)
		sc.item(&it)
	case "turn.completed":
		var u activity.Usage
		activity.ScanUsage(m.Usage, &u)
		sc.f.Usage(u, true)
	case "turn.failed":
		sc.f.Failed()
		if msg := m.Error.RawMessage(); msg != "" {
			sc.f.Error(msg)
		}
	case "error":
		sc.f.Error(m.Error.Text())
	}
	return true
}

// maxFailedOutput is how much of a failed command's output is read: its
// head is what may say what went wrong.
const maxFailedOutput = 16 << 10

// item reads a completed item: the agent's message, a command (and its
// output when it failed), the files a change touched, other tool calls.
func (sc *Scanner) item(it *itemMembers) {
	switch it.typ {
	case "agent_message":
		sc.f.Text("", it.said)
	case "command_execution":
		sc.f.Tool("shell", it.command, "")
		if it.hasExit && it.exitCode != 0 {
			sc.f.ToolFailed(string(it.output[:min(len(it.output), maxFailedOutput)]))
		}
	case "file_change":
		n := 0
		jsonscan.EachObject(it.changes, func(s *jsonscan.Scanner) {
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
		sc.f.Tool(it.typ, "", "")
	}
}
