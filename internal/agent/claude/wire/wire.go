// Package wire owns Claude Code's output format (`--output-format json` and
// `stream-json`), in one place: one streaming scan reads an event's members
// (members.parse), and two readers use it. Decoder turns the events into
// activity events, which the live view, `ralph logs` and the dashboard
// show; Scanner hands the facts in them to the analyzer (activity.Facts):
// session, text, tool calls, failed tool results, the result's status,
// usage, cost and refused tools, rate limits. The scan picks the members it
// needs and skips the rest — tool results, file contents — with a byte
// search, never decoding or holding them.
package wire

import "ralph/internal/jsonscan"

// Is reports whether an event of type typ belongs to stream-json and to
// no other agent's output. ("result" is the last event of stream-json and
// the whole of the json output; Gemini CLI's stream uses it too.)
func Is(typ string) bool {
	switch typ {
	case "system", "assistant", "user", "rate_limit_event", "stream_event":
		return true
	}
	return false
}

// Reads reports whether the Scanner reads events of type typ: those of
// stream-json, and the result that ends it and is the whole json output.
// (Gemini CLI's stream ends with a "result" too: the gemini wire package's
// IsResult tells it apart.)
func Reads(typ []byte) bool {
	switch string(typ) {
	case "system", "assistant", "user", "result", "rate_limit_event",
		"stream_event", "tool_progress", "control_request", "control_response", "keep_alive":
		return true
	}
	return false
}

// members holds the members of one event that ralph reads. Raw members
// alias the line and are valid only while it is read.
type members struct {
	typ, subtype        []byte
	cwd                 string
	sessionID, uuid     []byte
	apiError, errorStr  string
	result              string
	hasResult           bool
	isError, hasIsError bool
	// mayFail: the message has an "is_error" member whose value is not
	// false, so a tool result in it may have failed (user events).
	mayFail bool
	// cost is total_cost_usd or the older cost_usd, whichever came last;
	// the live view's summary shows total_cost_usd alone, when it is given
	// (hasTotalCost).
	cost, totalCost                 float64
	hasTotalCost, hasAPIErrorStatus bool
	apiErrorStatus                  int
	numTurns, durationMS            float64

	message, usage, modelUsage, denials, errors, rateLimit, metadata []byte
}

func (m *members) parse(b []byte) bool {
	s := jsonscan.New(b)
	err := s.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			m.typ, err = s.StringBytes()
		case "subtype":
			m.subtype, err = s.StringBytes()
		case "cwd":
			m.cwd, err = s.LooseString()
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
		case "total_cost_usd":
			m.hasTotalCost = s.Peek() != jsonscan.Null
			m.totalCost, err = s.Number()
			m.cost = m.totalCost
		case "cost_usd":
			m.cost, err = s.Number()
		case "api_error_status":
			m.hasAPIErrorStatus = s.Peek() != jsonscan.Null
			var f float64
			f, err = s.Number()
			m.apiErrorStatus = int(f)
		case "num_turns":
			m.numTurns, err = s.LooseNumber()
		case "duration_ms":
			m.durationMS, err = s.LooseNumber()
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
		case "metadata":
			if s.Peek() == jsonscan.Object {
				m.metadata, err = s.Raw()
			} else {
				err = s.Skip()
			}
		}
		return err
	})
	return err == nil && s.AtEnd()
}

// notFalse accepts the first byte of any value but false.
func notFalse(first byte) bool { return first != 'f' }

// block is one content block of an assistant message: its type, text
// (decoded into a buffer reused for the next block), and a tool call's
// name and raw input.
type block struct {
	typ, text []byte
	name      string
	input     []byte
}

// walkMessage reads an assistant message: each content block in turn,
// with the message id as far as read (an older message's plain string
// content is one text block), and after them its id and usage. text is
// the buffer the blocks' text is decoded into.
func walkMessage(msg []byte, text *[]byte, each func(id []byte, b block)) (id, usage []byte) {
	if len(msg) == 0 {
		return nil, nil
	}
	s := jsonscan.New(msg)
	_ = s.Object(func(k []byte) error {
		switch string(k) {
		case "id":
			id, _ = s.StringBytes()
		case "usage":
			usage, _ = s.Raw()
		case "content":
			if s.Peek() == jsonscan.String { // older shape: plain string content
				_ = decodeText(s, text)
				each(id, block{typ: textType, text: *text})
				return nil
			}
			return s.Array(func(int) error {
				if s.Peek() != jsonscan.Object {
					return s.Skip()
				}
				var b block
				*text = (*text)[:0]
				err := s.Object(func(k []byte) error {
					var err error
					switch string(k) {
					case "type":
						b.typ, err = s.StringBytes()
					case "text":
						err = decodeText(s, text)
					case "name":
						b.name, err = s.String()
					case "input":
						b.input, err = s.Raw()
					}
					return err
				})
				b.text = *text
				each(id, b)
				return err
			})
		}
		return nil
	})
	return id, usage
}

var textType = []byte("text")

// decodeText decodes the string value s is at into *text; on an error
// *text is empty, as String would return it.
func decodeText(s *jsonscan.Scanner, text *[]byte) error {
	if cap(*text) > 1<<20 {
		*text = nil // one long message does not stay held
	}
	var err error
	*text, err = s.AppendString((*text)[:0])
	return err
}
