// Package wire owns Gemini CLI's output formats (`--output-format
// stream-json` and `json`), in one place: one streaming scan reads an
// event's or the document's members (members.parse), and two readers use
// it. Decoder turns them into activity events, which the live view, `ralph
// logs` and the dashboard show; Scanner hands the facts in them to the
// analyzer (activity.Facts): session, messages and their deltas, tool calls
// and failures, errors, stats, the API's error object. The scan picks the
// members it needs and skips the rest with a byte search.
package wire

import (
	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

// Is reports whether an event of type typ belongs to stream-json and to
// no other agent's output. ("result" ends it with its stats, as Claude
// Code's result ends its own; OpenCode's events are told apart by their
// session id, see the opencode wire package.)
func Is(typ string) bool {
	switch typ {
	case "init", "message", "tool_use", "tool_result":
		return true
	}
	return false
}

// Reads reports whether the Scanner reads events of type typ, but for
// "result", which Claude Code's output ends with too: IsResult tells them
// apart.
func Reads(typ []byte) bool {
	switch string(typ) {
	case "init", "message", "tool_use", "tool_result", "error":
		return true
	}
	return false
}

// IsResult reports whether a "result" event is Gemini CLI's: it carries
// stats, and neither a result text nor a usage (Claude Code's carries
// those).
func IsResult(line []byte) bool {
	var m members
	return m.parse(line) && m.stats != nil && !m.hasResult && m.Usage == nil
}

// members holds the members of one event or document that ralph reads.
// Raw members alias the input and are valid only while it is read.
type members struct {
	activity.EventMembers
	sessionID, role, status, toolName, content []byte
	delta, hasResult, hasResponse              bool
	response                                   string
	params, output, stats                      []byte
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
		default:
			err = m.Member(s, key)
		}
		return err
	})
	return err == nil && s.AtEnd()
}
