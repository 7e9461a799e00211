package opencode

import (
	"bytes"
	"encoding/json"
	"strings"
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
	var ae apiError
	_ = json.Unmarshal(e.Error, &ae)
	return ae.message()
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

// apiError is OpenCode's error object: a name and data whose message says
// what happened; APIError adds the HTTP status and headers.
type apiError struct {
	Name string `json:"name"`
	Data struct {
		Message         string            `json:"message"`
		StatusCode      int               `json:"statusCode"`
		ResponseHeaders map[string]string `json:"responseHeaders"`
	} `json:"data"`
}

func (e apiError) message() string {
	if m := strings.TrimSpace(e.Data.Message); m != "" {
		return m
	}
	if e.Name != "" {
		return e.Name
	}
	return "OpenCode reported an error"
}
