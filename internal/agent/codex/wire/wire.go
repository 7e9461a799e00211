// Package wire owns the output format of `codex exec --json`, in one
// place: one streaming scan reads an event's members (members.parse, and
// itemMembers.parse for its item), and two readers use it. Decoder turns
// the events into activity events, which the live view, `ralph logs` and
// the dashboard show; Scanner hands the facts in them to the analyzer
// (activity.Facts): the thread, messages, commands and their failures,
// file changes, usage, failed turns. The scan picks the members it needs
// and skips the rest with a byte search.
package wire

import (
	"bytes"
	"strings"

	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

// Is reports whether an event of type typ belongs to `codex exec --json`:
// its thread, turn and item events. (Its "error" event is Gemini CLI's
// name too.)
func Is(typ string) bool {
	return strings.HasPrefix(typ, "thread.") || strings.HasPrefix(typ, "turn.") || strings.HasPrefix(typ, "item.")
}

// Reads reports whether the Scanner reads events of type typ: the
// thread, turn and item events, and "error" (which Gemini CLI's stream
// writes the same way).
func Reads(typ []byte) bool {
	return bytes.HasPrefix(typ, []byte("thread.")) || bytes.HasPrefix(typ, []byte("turn.")) ||
		bytes.HasPrefix(typ, []byte("item.")) || string(typ) == "error"
}

// members holds the members of one event that ralph reads. Raw members
// alias the line and are valid only while it is read.
type members struct {
	activity.EventMembers
	threadID, item []byte
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
		default:
			err = m.Member(s, key)
		}
		return err
	})
	return err == nil && s.AtEnd()
}

// itemMembers holds the members of an item that ralph reads: what kind of
// item, its text, a command with its output and exit code, the changes of
// a file change, a tool of an MCP server, a web search.
type itemMembers struct {
	id, typ, text, message, command string
	// said is the last of text and message: an agent message says one, an
	// error the other.
	said string
	// output aliases the event when it has no escapes: valid only while
	// the event is read.
	output              []byte
	exitCode            float64
	hasExit             bool
	changes             []byte
	server, tool, query string
}

func (it *itemMembers) parse(raw []byte) {
	if len(raw) == 0 {
		return
	}
	s := jsonscan.New(raw)
	_ = s.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "id":
			it.id, err = s.LooseString()
		case "type":
			it.typ, err = s.String()
		case "text":
			if s.Peek() == jsonscan.String {
				it.text, err = s.String()
				it.said = it.text
			}
		case "message":
			if s.Peek() == jsonscan.String {
				it.message, err = s.String()
				it.said = it.message
			}
		case "command":
			if s.Peek() == jsonscan.String {
				it.command, err = s.String()
			}
		case "aggregated_output":
			if s.Peek() == jsonscan.String {
				it.output, err = s.StringBytes()
			}
		case "exit_code":
			if s.Peek() == jsonscan.Number {
				it.hasExit = true
				it.exitCode, err = s.Number()
			}
		case "changes":
			it.changes, err = s.Raw()
		case "server":
			it.server, err = s.LooseString()
		case "tool":
			it.tool, err = s.LooseString()
		case "query":
			it.query, err = s.LooseString()
		}
		return err
	})
}
