package wire

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"ralph/internal/activity"
	"ralph/internal/jsonscan"
)

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
	var m members
	if !m.parse(b) {
		return
	}
	if string(m.Type) == "message" {
		// The prompt comes back as a user message; the answer comes in
		// deltas, shown as one text. A whole message stands alone.
		switch r := string(m.role); {
		case r != "assistant" && r != "model":
		case m.delta:
			d.pending.Write(m.content)
		default:
			d.Flush()
			d.s.Text(string(m.content))
		}
		return
	}
	d.Flush()
	switch string(m.Type) {
	case "tool_use":
		d.s.Tool(string(m.toolName), activity.ToolTarget(m.params, d.s.Dir))
	case "tool_result":
		out, _ := jsonscan.StringValue(m.output)
		failure := ""
		if string(m.status) == "error" {
			failure = "error"
			if out == "" {
				out = m.Error.RawMessage()
			}
		}
		d.s.Result(out, failure)
	case "error":
		msg, _ := jsonscan.StringValue(m.Error.Message)
		d.s.Error(msg)
	case "result":
		if m.Error.Raw != nil {
			d.s.Error(m.Error.RawMessage())
		}
		status := "result: " + string(m.status)
		if st, ok := readStats(m.stats); ok {
			d.s.Summary(status, activity.Count(int(st.toolCalls), "tool call"), activity.Millis(st.durationMS),
				activity.Tokens(st.input, st.output, st.cached, 0))
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
	var m members
	if !m.parse(b) {
		return
	}
	if m.hasResponse {
		d.s.Text(m.response)
	}
	failed := m.Error.Raw != nil && string(m.Error.Raw) != "null"
	if failed {
		d.s.Error(m.Error.RawMessage())
	}
	var in, out, cached int64
	var tools []byte
	if s := jsonscan.New(m.stats); s.Peek() == jsonscan.Object {
		_ = s.Object(func(k []byte) error {
			switch string(k) {
			case "models":
				return s.Object(func([]byte) error {
					t := docTokens(s)
					in += max(t.input, t.prompt)
					out += t.candidates
					cached += t.cached
					return nil
				})
			case "tools":
				tools, _ = s.Raw()
			}
			return nil
		})
	}
	status := "result"
	if failed {
		status = "result: error"
	}
	d.s.Summary(status, toolCounts(tools), activity.Tokens(in, out, cached, 0))
}

type tokens struct{ input, prompt, candidates, cached int64 }

// docTokens consumes one model's stats in the json output and returns its
// token counts.
func docTokens(s *jsonscan.Scanner) (t tokens) {
	if s.Peek() != jsonscan.Object {
		_ = s.Skip()
		return t
	}
	_ = s.Object(func(k []byte) error {
		if string(k) != "tokens" || s.Peek() != jsonscan.Object {
			return s.Skip()
		}
		return s.Object(func(k []byte) error {
			var dst *int64
			switch string(k) {
			case "input":
				dst = &t.input
			case "prompt":
				dst = &t.prompt
			case "candidates":
				dst = &t.candidates
			case "cached":
				dst = &t.cached
			default:
				return s.Skip()
			}
			f, err := s.Number()
			*dst = int64(f)
			return err
		})
	})
	return t
}

// toolCounts says how many tool calls the json output counts, and of each
// tool.
func toolCounts(raw []byte) string {
	var total int
	counts := map[string]int{}
	if s := jsonscan.New(raw); s.Peek() == jsonscan.Object {
		_ = s.Object(func(k []byte) error {
			switch string(k) {
			case "totalCalls":
				f, err := s.Number()
				total = int(f)
				return err
			case "byName":
				if s.Peek() != jsonscan.Object {
					return s.Skip()
				}
				return s.Object(func(name []byte) error {
					var f float64
					if s.Peek() == jsonscan.Object {
						_ = s.Object(func(k []byte) error {
							if string(k) == "count" {
								f, _ = s.Number()
							}
							return nil
						})
					} else {
						_ = s.Skip()
					}
					counts[string(name)] = int(f)
					return nil
				})
			}
			return nil
		})
	}
	tools := activity.Count(total, "tool call")
	if tools == "" || len(counts) == 0 {
		return tools
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	slices.Sort(names)
	var each []string
	for _, n := range names {
		each = append(each, fmt.Sprintf("%s %d", n, counts[n]))
	}
	return tools + " (" + strings.Join(each, ", ") + ")"
}
