// Package wire owns Gemini CLI's output formats (`--output-format
// stream-json` and `json`), in one place: Decoder decodes them into
// activity events, which the live view, `ralph logs` and the dashboard
// show, and Scanner reads the same events and document for the facts the
// analyzer judges (session, messages and their deltas, tool calls and
// failures, errors, stats, the API's error object), with a streaming scan
// that skips what no fact comes from.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"ralph/internal/activity"
)

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

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

type event struct {
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Message    string          `json:"message"`
	Error      *apiError       `json:"error"`
	Stats      *struct {
		Input      int64 `json:"input_tokens"`
		Output     int64 `json:"output_tokens"`
		Cached     int64 `json:"cached"`
		DurationMS int64 `json:"duration_ms"`
		ToolCalls  int   `json:"tool_calls"`
	} `json:"stats"`
}

// Decoder turns Gemini CLI's output into activity events: stream-json line
// by line, or the json document whole.
type Decoder struct {
	s       *activity.Sink
	pending strings.Builder // the model's streamed chunks, joined into one text
}

// NewDecoder returns a decoder that sends its events to s.
func NewDecoder(s *activity.Sink) *Decoder { return &Decoder{s: s} }

// Line decodes one line of stream-json. A line of text is shown as it is;
// a line cut short is dropped.
func (d *Decoder) Line(line []byte) {
	if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '{' {
		d.Flush()
	}
	b, ok := d.s.Object(line)
	if !ok {
		return
	}
	var ev event
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	if ev.Type == "message" {
		// The prompt comes back as a user message; the answer comes in
		// deltas, shown as one text. A whole message stands alone.
		switch {
		case ev.Role != "assistant" && ev.Role != "model":
		case ev.Delta:
			d.pending.WriteString(ev.Content)
		default:
			d.Flush()
			d.s.Text(ev.Content)
		}
		return
	}
	d.Flush()
	switch ev.Type {
	case "tool_use":
		d.s.Tool(ev.ToolName, activity.ToolTarget(ev.Parameters, d.s.Dir))
	case "tool_result":
		out, failure := ev.Output, ""
		if ev.Status == "error" {
			failure = "error"
			if out == "" && ev.Error != nil {
				out = ev.Error.Message
			}
		}
		d.s.Result(out, failure)
	case "error":
		d.s.Error(ev.Message)
	case "result":
		if ev.Error != nil {
			d.s.Error(ev.Error.Message)
		}
		status := "result: " + ev.Status
		if s := ev.Stats; s != nil {
			d.s.Summary(status, activity.Count(s.ToolCalls, "tool call"), activity.Millis(s.DurationMS),
				activity.Tokens(s.Input, s.Output, s.Cached, 0))
		} else {
			d.s.Summary(status)
		}
	}
}

// Flush shows the text gathered so far.
func (d *Decoder) Flush() {
	if d.pending.Len() > 0 {
		d.s.Text(d.pending.String())
		d.pending.Reset()
	}
}

// Document decodes the json output, one document: the answer, an error,
// and the totals of its stats (it names no individual tool calls).
func (d *Decoder) Document(b []byte) {
	var doc struct {
		Response *string   `json:"response"`
		Error    *apiError `json:"error"`
		Stats    struct {
			Models map[string]struct {
				Tokens struct {
					Input      int64 `json:"input"`
					Prompt     int64 `json:"prompt"`
					Candidates int64 `json:"candidates"`
					Cached     int64 `json:"cached"`
				} `json:"tokens"`
			} `json:"models"`
			Tools struct {
				TotalCalls int `json:"totalCalls"`
				ByName     map[string]struct {
					Count int `json:"count"`
				} `json:"byName"`
			} `json:"tools"`
		} `json:"stats"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return
	}
	if doc.Response != nil {
		d.s.Text(*doc.Response)
	}
	if doc.Error != nil {
		d.s.Error(doc.Error.Message)
	}
	var in, out, cached int64
	for _, m := range doc.Stats.Models {
		in += max(m.Tokens.Input, m.Tokens.Prompt)
		out += m.Tokens.Candidates
		cached += m.Tokens.Cached
	}
	tools := activity.Count(doc.Stats.Tools.TotalCalls, "tool call")
	if names := slices.Sorted(maps.Keys(doc.Stats.Tools.ByName)); tools != "" && len(names) > 0 {
		var each []string
		for _, n := range names {
			each = append(each, fmt.Sprintf("%s %d", n, doc.Stats.Tools.ByName[n].Count))
		}
		tools += " (" + strings.Join(each, ", ") + ")"
	}
	status := "result"
	if doc.Error != nil {
		status = "result: error"
	}
	d.s.Summary(status, tools, activity.Tokens(in, out, cached, 0))
}
