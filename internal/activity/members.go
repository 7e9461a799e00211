package activity

import (
	"unsafe"

	"ralph/internal/jsonscan"
)

// What the wire packages' scans share beyond the facts' own names: how
// they hand a scanned value on without copying it, and the error members
// that Codex and Gemini CLI write alike.

// View is b as a string without a copy, valid while b is: what the facts
// are handed lives only as long as the call (see Facts), so the scanners
// need not allocate for it.
func View(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// EventMembers are the members of an event that Codex and Gemini CLI
// write alike: its type, its usage, and its error. A wire package's scan
// hands each member it does not read itself to Member. Raw members alias
// the event and are valid only while it is read.
type EventMembers struct {
	Type, Usage []byte
	Error       ErrorMembers
}

// Member consumes the value of key when it is one of the EventMembers,
// and leaves any other value unread (the scan then skips it).
func (e *EventMembers) Member(s *jsonscan.Scanner, key []byte) (err error) {
	switch string(key) {
	case "type":
		e.Type, err = s.StringBytes()
	case "usage":
		e.Usage, err = s.Raw()
	case "error":
		err = e.Error.ReadError(s)
	case "message":
		e.Error.Message, err = s.Raw()
	}
	return err
}

// ErrorMembers are an event's "error" and "message" members as Codex and
// Gemini CLI write them: an error that is a string or an object with a
// message, and a message that an error event gives as a string. Raw
// members alias the event and are valid only while it is read.
type ErrorMembers struct {
	Str     string // the error, when it is a string
	Raw     []byte // the error, when it is any other value
	Message []byte // the message member, raw
}

// ReadError consumes the value of an "error" member.
func (e *ErrorMembers) ReadError(s *jsonscan.Scanner) (err error) {
	if s.Peek() == jsonscan.String {
		e.Str, err = s.String()
	} else {
		e.Raw, err = s.Raw()
	}
	return err
}

// RawMessage is the message of an error that is an object; "" when there
// is none.
func (e *ErrorMembers) RawMessage() string { return jsonscan.StringMember(e.Raw, "message") }

// Text is what an error event says: its message, else its error as a
// string or an object with a message.
func (e *ErrorMembers) Text() string {
	msg := e.Str
	if m, ok := jsonscan.StringValue(e.Message); ok {
		msg = m
	}
	if msg == "" {
		msg = e.RawMessage()
	}
	return msg
}
