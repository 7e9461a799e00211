// Package wire owns the output format of `opencode run --format json`:
// its events, how to tell them from other agents' events, and their
// decoding into activity events, which the live view, `ralph logs` and the
// dashboard show. The OpenCode adapter's analysis reads the same events.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"ralph/internal/activity"
)

// Event is one line of `opencode run --format json`: {"type", "timestamp",
// "sessionID"} plus "part" (a message part) or "error". Only the members
// ralph reads are decoded; a tool's output stays raw until needed.
type Event struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionID"`
	Part      Part            `json:"part"`
	Error     json.RawMessage `json:"error"`
}

// Part is the message part an event carries: text, a finished tool call,
// or a finished step with its tokens and cost.
type Part struct {
	Type      string    `json:"type"`
	MessageID string    `json:"messageID"`
	Text      string    `json:"text"`
	Tool      string    `json:"tool"`
	State     ToolState `json:"state"`
	Reason    string    `json:"reason"` // why a step ended: "tool-calls", "stop"
	Cost      float64   `json:"cost"`
	Tokens    Tokens    `json:"tokens"`
}

// ToolState is how a tool call went.
type ToolState struct {
	Status   string          `json:"status"` // "completed" or "error"
	Input    json.RawMessage `json:"input"`
	Output   json.RawMessage `json:"output"`
	Error    string          `json:"error"`
	Metadata struct {
		Exit *int `json:"exit"` // bash's exit status
	} `json:"metadata"`
}

// Tokens are one step's token counts.
type Tokens struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

// ParseEvent decodes one line. ok is false for a line that is no event:
// the default format's text, or a line cut short.
func ParseEvent(line []byte) (ev Event, ok bool) {
	b := bytes.TrimSpace(line)
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &ev) != nil || ev.Type == "" {
		return Event{}, false
	}
	return ev, true
}

// eventTypes are the events `run --format json` prints.
var eventTypes = map[string]bool{
	"step_start": true, "step_finish": true, "text": true, "reasoning": true, "tool_use": true, "error": true,
}

// IsEvent reports whether line is an event of `opencode run --format
// json`. Every such event carries the session id, in a spelling no other
// agent uses: that tells OpenCode's "text", "tool_use" and "error" from
// Gemini's and Codex's events of the same names.
func IsEvent(line []byte) bool {
	ev, ok := ParseEvent(line)
	return ok && ev.SessionID != "" && eventTypes[ev.Type]
}

// Detect reports whether an output that begins with head is OpenCode's
// event stream, judged by its first line that starts like JSON.
func Detect(head []byte) bool {
	for line := range bytes.Lines(head) {
		t := bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")))
		if len(t) > 0 && t[0] == '{' {
			return IsEvent(t)
		}
	}
	return false
}

// ErrorMessage is what an error event says went wrong.
func (e Event) ErrorMessage() string {
	return e.APIError().Message()
}

// APIError decodes the event's error.
func (e Event) APIError() APIError {
	var ae APIError
	_ = json.Unmarshal(e.Error, &ae)
	return ae
}

// OutputText is a tool's output as text.
func (s ToolState) OutputText() string {
	var out string
	_ = json.Unmarshal(s.Output, &out)
	return out
}

// Rejected says whether a failed tool call was a permission OpenCode
// refused: `run` rejects every request it would have to ask about.
func (p Part) Rejected() bool {
	return p.State.Status == "error" && strings.Contains(p.State.Error, "rejected permission")
}

// APIError is OpenCode's error object: a name and data whose message says
// what happened; its APIError adds the HTTP status and headers.
type APIError struct {
	Name string `json:"name"`
	Data struct {
		Message         string            `json:"message"`
		StatusCode      int               `json:"statusCode"`
		ResponseHeaders map[string]string `json:"responseHeaders"`
	} `json:"data"`
}

// Message is what the error says happened.
func (e APIError) Message() string {
	if m := strings.TrimSpace(e.Data.Message); m != "" {
		return m
	}
	if e.Name != "" {
		return e.Name
	}
	return "OpenCode reported an error"
}

// Decoder turns OpenCode's events, line by line, into activity events.
type Decoder struct {
	s *activity.Sink
}

// NewDecoder returns a decoder that sends its events to s.
func NewDecoder(s *activity.Sink) *Decoder { return &Decoder{s: s} }

// Line decodes one line of output. A line of text is shown as it is; a
// line cut short is dropped.
func (d *Decoder) Line(line []byte) {
	b, ok := d.s.Object(line)
	if !ok {
		return
	}
	ev, ok := ParseEvent(b)
	if !ok {
		return
	}
	p := ev.Part
	switch ev.Type {
	case "text":
		d.s.Text(p.Text)
	case "tool_use":
		target := activity.ToolTarget(p.State.Input, d.s.Dir)
		if p.Rejected() {
			msg := "permission denied: " + p.Tool
			if target != "" {
				msg += " " + target
			}
			d.s.Error(msg)
			return // it never ran
		}
		d.s.Tool(p.Tool, target)
		out, failure := p.State.OutputText(), ""
		switch exit := p.State.Metadata.Exit; {
		case p.State.Status == "error":
			out, failure = p.State.Error, "error"
		case exit != nil && *exit != 0:
			failure = fmt.Sprintf("exit %d", *exit)
		}
		d.s.Result(out, failure)
	case "step_finish":
		// Reasoning is output the provider bills as such.
		t := p.Tokens
		d.s.Summary("step: "+p.Reason, activity.Tokens(t.Input, t.Output+t.Reasoning, t.Cache.Read, t.Cache.Write), fmt.Sprintf("$%.4f", p.Cost))
	case "error":
		d.s.Error(ev.ErrorMessage())
	}
}

// Flush implements activity.Decoder; nothing is held back.
func (d *Decoder) Flush() {}
