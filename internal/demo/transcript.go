package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// transcript prints what the agent does in Claude Code's output formats:
// stream-json events as they happen, or at the end one json result object
// or the result text.
type transcript struct {
	w       io.Writer
	format  string
	session string
	model   string
	start   time.Time
	apiTime time.Duration
	turns   int
	usage   usage
	denials []denial
}

type denial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

type initEvent struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	Cwd            string   `json:"cwd"`
	SessionID      string   `json:"session_id"`
	Tools          []string `json:"tools"`
	Model          string   `json:"model"`
	PermissionMode string   `json:"permissionMode"`
}

type messageEvent struct {
	Type    string `json:"type"`
	Message struct {
		ID      string    `json:"id,omitempty"`
		Type    string    `json:"type,omitempty"`
		Role    string    `json:"role"`
		Model   string    `json:"model,omitempty"`
		Content []content `json:"content"`
	} `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	SessionID       string  `json:"session_id"`
}

type resultEvent struct {
	Type              string   `json:"type"`
	Subtype           string   `json:"subtype"`
	IsError           bool     `json:"is_error"`
	DurationMS        int64    `json:"duration_ms"`
	DurationAPIMS     int64    `json:"duration_api_ms"`
	NumTurns          int      `json:"num_turns"`
	Result            *string  `json:"result,omitempty"`
	Errors            []string `json:"errors,omitempty"`
	StopReason        string   `json:"stop_reason,omitempty"`
	SessionID         string   `json:"session_id"`
	TotalCostUSD      float64  `json:"total_cost_usd"`
	Usage             usage    `json:"usage"`
	PermissionDenials []denial `json:"permission_denials"`
	TerminalReason    string   `json:"terminal_reason"`
}

func (t *transcript) emit(v any) {
	if t.format != "stream-json" {
		return
	}
	b, _ := json.Marshal(v) // plain structs and raw JSON that was validated
	fmt.Fprintf(t.w, "%s\n", b)
}

func (t *transcript) init(dir string) {
	tools := make([]string, len(toolDefs))
	for i, d := range toolDefs {
		tools[i] = d.Name
	}
	t.emit(initEvent{Type: "system", Subtype: "init", Cwd: dir, SessionID: t.session, Tools: tools,
		Model: t.model, PermissionMode: "default"})
}

// assistant prints one content block of the model's reply, as Claude Code
// does: one assistant event per block.
func (t *transcript) assistant(b content) {
	ev := messageEvent{Type: "assistant", SessionID: t.session}
	ev.Message.Type, ev.Message.Role, ev.Message.Model = "message", "assistant", t.model
	ev.Message.Content = []content{b}
	t.emit(ev)
}

func (t *transcript) toolResults(results []content) {
	ev := messageEvent{Type: "user", SessionID: t.session}
	ev.Message.Role = "user"
	ev.Message.Content = results
	t.emit(ev)
}

func (t *transcript) denied(b content) {
	t.denials = append(t.denials, denial{ToolName: b.Name, ToolUseID: b.ID, ToolInput: b.Input})
}

// result prints the closing result and returns the exit code: 1 when the
// call failed, as Claude Code exits on API errors.
func (t *transcript) result(subtype, text string, err error) int {
	ev := resultEvent{
		Type: "result", Subtype: subtype, IsError: err != nil, NumTurns: t.turns, SessionID: t.session,
		DurationMS: time.Since(t.start).Milliseconds(), DurationAPIMS: t.apiTime.Milliseconds(),
		TotalCostUSD: t.cost(), Usage: t.usage, PermissionDenials: t.denials, TerminalReason: "completed",
	}
	if ev.PermissionDenials == nil {
		ev.PermissionDenials = []denial{}
	}
	switch {
	case subtype == "error_max_turns":
		ev.Errors = []string{err.Error()}
		ev.TerminalReason = "max_turns"
	case err != nil:
		msg := err.Error()
		ev.Result = &msg
	default:
		ev.Result, ev.StopReason = &text, "end_turn"
	}
	switch t.format {
	case "stream-json":
		t.emit(ev)
	case "json":
		b, _ := json.Marshal(ev)
		fmt.Fprintf(t.w, "%s\n", b)
	default:
		if ev.Result != nil {
			fmt.Fprintln(t.w, *ev.Result)
		} else if len(ev.Errors) > 0 {
			fmt.Fprintln(t.w, ev.Errors[0])
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

func (t *transcript) cost() float64 {
	u := t.usage
	return float64(u.InputTokens+u.CacheCreationInputTokens)*inputPrice +
		float64(u.CacheReadInputTokens)*inputPrice/10 + float64(u.OutputTokens)*outputPrice
}
