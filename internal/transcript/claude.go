package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/claude"
)

// claudeEvent is what this package reads of a Claude Code event beyond
// what claude.ParseLive shows.
type claudeEvent struct {
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
	IsError        bool     `json:"is_error"`
	Result         *string  `json:"result"`
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

// claude renders one Claude Code event. claude.ParseLive renders what the
// live view shows (prose, tool calls, denials, errors); tool results, rate
// limits and the final answer with its usage are added here.
func (r *Renderer) claude(line []byte) {
	var ev claudeEvent
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" && ev.Cwd != "" {
			r.dir = ev.Cwd
		}
		return
	case "user":
		r.claudeToolResults(ev.Message.Content)
		return
	case "rate_limit_event":
		r.claudeRateLimit(ev)
		return
	}
	claude.ParseLive(line, r.dir, func(e agent.LiveEvent) {
		if e.Kind == agent.LiveError && ev.Type == "result" {
			// Fed one line at a time, ParseLive cannot see that the error
			// repeats the agent's last words (usage-limit messages do).
			r.errorOnce(e.Text)
			return
		}
		r.send(e)
	})
	if ev.Type == "result" {
		r.claudeResult(ev)
	}
}

// claudeResult shows the final answer, unless the last prose already said
// it (stream-json repeats it), and how the call ended.
func (r *Renderer) claudeResult(ev claudeEvent) {
	if !ev.IsError && ev.Result != nil && strings.TrimSpace(*ev.Result) != strings.TrimSpace(r.lastText) {
		r.text(*ev.Result)
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
	r.summary("result: "+status, count(ev.NumTurns, "turn"), duration(ev.DurationMS),
		tokens(u.Input, u.Output, u.CacheRead, u.CacheCreation), cost)
}

func (r *Renderer) claudeToolResults(content json.RawMessage) {
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
		r.toolResult(claudeResultText(b.Content), failure)
	}
}

// claudeResultText is a tool result's text: a string, or text blocks.
func claudeResultText(raw json.RawMessage) string {
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

// claudeRateLimit shows a rate limit that bites or is about to; the
// routine "allowed" events are noise.
func (r *Renderer) claudeRateLimit(ev claudeEvent) {
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
		r.errorOnce(msg)
		return
	}
	r.send(agent.LiveEvent{Kind: agent.LiveOutput, Text: msg})
}

// target is the short "what" of a tool call. Gemini and Codex name tool
// inputs as Claude does (file_path, command, pattern, path), so Claude's
// rules serve them too, reached through ParseLive with the call dressed as
// a Claude tool_use block.
func (r *Renderer) target(tool string, input any) string {
	line, err := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{
		"content": []any{map[string]any{"type": "tool_use", "name": tool, "input": input}},
	}})
	if err != nil {
		return ""
	}
	var t string
	claude.ParseLive(line, r.dir, func(e agent.LiveEvent) {
		if e.Kind == agent.LiveTool {
			t = e.Target
		}
	})
	return t
}

func duration(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return (time.Duration(ms) * time.Millisecond).String()
}
