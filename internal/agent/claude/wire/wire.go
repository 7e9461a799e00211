// Package wire owns Claude Code's output format (`--output-format json` and
// `stream-json`), in one place: Decoder decodes each event into activity
// events, which the live view, `ralph logs` and the dashboard show, and
// Scanner reads the same events for the facts the analyzer judges (session,
// text, tool calls, failed tool results, the result's status, usage, cost
// and refused tools, rate limits), with a streaming scan that skips what no
// fact comes from.
package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"ralph/internal/activity"
)

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

// event is what ralph reads of a Claude Code event. Tool results (user
// events) are decoded only when they are shown.
type event struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Cwd     string `json:"cwd"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	RateLimit *struct {
		Status   string `json:"status"`
		ResetsAt int64  `json:"resetsAt"`
		Type     string `json:"rateLimitType"`
	} `json:"rate_limit_info"`

	// The final result event (the whole output with --output-format json).
	IsError           bool            `json:"is_error"`
	Result            *string         `json:"result"`
	Errors            json.RawMessage `json:"errors"`
	PermissionDenials []struct {
		ToolName  string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	} `json:"permission_denials"`
	APIErrorStatus *int     `json:"api_error_status"`
	NumTurns       int      `json:"num_turns"`
	DurationMS     int64    `json:"duration_ms"`
	CostUSD        *float64 `json:"total_cost_usd"`
	Usage          struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// Decoder turns Claude Code's output, line by line, into activity events.
type Decoder struct {
	s *activity.Sink
}

// NewDecoder returns a decoder that sends its events to s. The init
// event's cwd replaces s.Dir: it is the CLI's own view of the directory
// (symlinks resolved).
func NewDecoder(s *activity.Sink) *Decoder { return &Decoder{s: s} }

// Line decodes one line of output. A line of text is shown as it is; a
// line cut short is dropped.
func (d *Decoder) Line(line []byte) {
	b, ok := d.s.Object(line)
	if !ok {
		return
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &head) != nil {
		return
	}
	switch head.Type {
	case "system", "assistant", "result", "rate_limit_event":
	case "user":
		if !d.s.Results() {
			return // tool results are not shown: spare decoding them
		}
	default:
		return // stream events and the like
	}
	var ev event
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" && ev.Cwd != "" {
			d.s.Dir = ev.Cwd
		}
	case "assistant":
		d.assistant(ev.Message.Content)
	case "user":
		d.toolResults(ev.Message.Content)
	case "rate_limit_event":
		d.rateLimit(ev)
	case "result":
		d.result(ev)
	}
}

// Flush implements activity.Decoder; nothing is held back.
func (d *Decoder) Flush() {}

func (d *Decoder) assistant(content json.RawMessage) {
	var blocks []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		var s string
		if json.Unmarshal(content, &s) == nil {
			d.s.Text(s)
		}
		return
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			d.s.Text(bl.Text)
		case "tool_use":
			d.s.Tool(bl.Name, activity.ToolTarget(bl.Input, d.s.Dir))
		}
	}
}

// result shows what went wrong, if anything (refused tools, the error),
// the final answer unless the last prose already said it (stream-json
// repeats it), and how the call ended.
func (d *Decoder) result(ev event) {
	for _, den := range ev.PermissionDenials {
		msg := "permission denied: " + den.ToolName
		if t := activity.ToolTarget(den.ToolInput, d.s.Dir); t != "" {
			msg += " " + t
		}
		d.s.Error(msg)
	}
	if ev.IsError {
		d.s.Error(errorMessage(ev))
	} else if ev.Result != nil && strings.TrimSpace(*ev.Result) != strings.TrimSpace(d.s.LastText()) {
		d.s.Text(*ev.Result)
	}
	status := ev.Subtype
	if ev.IsError && (status == "" || status == "success") {
		status = "error" // API errors still say "success"
	}
	if ev.APIErrorStatus != nil {
		status += fmt.Sprintf(" (%d)", *ev.APIErrorStatus)
	}
	var cost string
	if ev.CostUSD != nil {
		cost = fmt.Sprintf("$%.4f", *ev.CostUSD)
	}
	u := ev.Usage
	d.s.Summary("result: "+status, activity.Count(ev.NumTurns, "turn"), activity.Millis(ev.DurationMS),
		activity.Tokens(u.Input, u.Output, u.CacheRead, u.CacheCreation), cost)
}

// errorMessage is what a failed call says went wrong: its result, else the
// first of its errors (max turns has no result).
func errorMessage(ev event) string {
	if ev.Result != nil && strings.TrimSpace(*ev.Result) != "" {
		return *ev.Result
	}
	var errs []string
	if json.Unmarshal(ev.Errors, &errs) == nil && len(errs) > 0 {
		return errs[0]
	}
	return "the agent reported an error (" + ev.Subtype + ")"
}

func (d *Decoder) toolResults(content json.RawMessage) {
	var blocks []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
		IsError bool            `json:"is_error"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return // a prompt, not tool results
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		failure := ""
		if b.IsError {
			failure = "error"
		}
		d.s.Result(resultText(b.Content), failure)
	}
}

// resultText is a tool result's text: a string, or text blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// rateLimit shows a rate limit that bites or is about to; the routine
// "allowed" events are noise.
func (d *Decoder) rateLimit(ev event) {
	rl := ev.RateLimit
	if rl == nil || rl.Status == "" || rl.Status == "allowed" {
		return
	}
	msg := "rate limit"
	if rl.Type != "" {
		msg += " " + rl.Type
	}
	msg += ": " + rl.Status
	if rl.ResetsAt > 0 {
		msg += ", resets " + time.Unix(rl.ResetsAt, 0).UTC().Format("2006-01-02 15:04 UTC")
	}
	if rl.Status == "rejected" {
		d.s.Error(msg)
		return
	}
	d.s.Emit(activity.Event{Kind: activity.Output, Text: msg})
}
