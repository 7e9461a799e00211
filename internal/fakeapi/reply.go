package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// reply is one assistant message, rendered as SSE or as plain JSON.
type reply struct {
	id         string
	requestID  string
	model      string
	blocks     []replyBlock
	stopReason string
	usage      Usage
}

type replyBlock struct {
	typ   string // text or tool_use
	text  string
	id    string
	name  string
	input json.RawMessage // compact
}

func buildReply(t Turn, iter, turn int, model string, mr *MessagesRequest, reqBytes int) reply {
	r := reply{
		id:         "msg_fake_" + randomHex(10),
		requestID:  "req_fake_" + randomHex(10),
		model:      model,
		stopReason: t.StopReason,
	}
	outBytes := 0
	if t.Text != "" {
		text := expand(t.Text, mr, iter, turn)
		r.blocks = append(r.blocks, replyBlock{typ: "text", text: text})
		outBytes += len(text)
	}
	for _, tu := range t.ToolUses {
		var in bytes.Buffer
		if err := json.Compact(&in, tu.Input); err != nil {
			in.Reset()
			in.WriteString("{}") // Validate already rejected this
		}
		r.blocks = append(r.blocks, replyBlock{
			typ:   "tool_use",
			id:    toolUseID(iter, turn, len(r.blocks)),
			name:  tu.Name,
			input: in.Bytes(),
		})
		outBytes += len(tu.Name) + in.Len()
	}
	if r.stopReason == "" {
		r.stopReason = "end_turn"
		if len(t.ToolUses) > 0 {
			r.stopReason = "tool_use"
		}
	}
	if t.Usage != nil {
		r.usage = *t.Usage
	} else {
		r.usage = Usage{InputTokens: estimateTokens(reqBytes), OutputTokens: estimateTokens(outBytes)}
	}
	return r
}

// expand fills the placeholders documented on Turn.
func expand(text string, mr *MessagesRequest, iter, turn int) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	prompt := ""
	if p := mr.Prompts(); len(p) > 0 {
		prompt = p[len(p)-1]
	}
	return strings.NewReplacer(
		"{{prompt}}", prompt,
		"{{tool_result}}", mr.LastToolResult(),
		"{{iteration}}", strconv.Itoa(iter),
		"{{turn}}", strconv.Itoa(turn),
	).Replace(text)
}

// Wire shapes of the Messages API.
type (
	wireUsage struct {
		InputTokens              int `json:"input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		OutputTokens             int `json:"output_tokens"`
	}
	wireBlock struct {
		Type  string           `json:"type"`
		Text  *string          `json:"text,omitempty"`
		ID    string           `json:"id,omitempty"`
		Name  string           `json:"name,omitempty"`
		Input *json.RawMessage `json:"input,omitempty"`
	}
	wireMessage struct {
		ID           string      `json:"id"`
		Type         string      `json:"type"`
		Role         string      `json:"role"`
		Model        string      `json:"model"`
		Content      []wireBlock `json:"content"`
		StopReason   *string     `json:"stop_reason"`
		StopSequence *string     `json:"stop_sequence"`
		Usage        wireUsage   `json:"usage"`
	}
)

func (u Usage) wire(output int) wireUsage {
	return wireUsage{
		InputTokens:              u.InputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens,
		OutputTokens:             output,
	}
}

func (b replyBlock) wire(full bool) wireBlock {
	w := wireBlock{Type: b.typ}
	switch b.typ {
	case "text":
		text := ""
		if full {
			text = b.text
		}
		w.Text = &text
	case "tool_use":
		in := json.RawMessage("{}")
		if full {
			in = b.input
		}
		w.ID, w.Name, w.Input = b.id, b.name, &in
	}
	return w
}

func (r reply) message(full bool) wireMessage {
	m := wireMessage{
		ID:      r.id,
		Type:    "message",
		Role:    "assistant",
		Model:   r.model,
		Content: []wireBlock{},
		Usage:   r.usage.wire(r.usage.OutputTokens),
	}
	if full {
		m.StopReason = &r.stopReason
		for _, b := range r.blocks {
			m.Content = append(m.Content, b.wire(true))
		}
	} else {
		// message_start reports one output token, as the real API does.
		m.Usage = r.usage.wire(1)
	}
	return m
}

func writeJSON(w http.ResponseWriter, r reply) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", r.requestID)
	_ = json.NewEncoder(w).Encode(r.message(true))
}

// writeStream sends the reply as the event sequence of the streaming API,
// with text and tool input split over several deltas so that clients are
// exercised on reassembly.
func writeStream(w http.ResponseWriter, r reply) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("request-id", r.requestID)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data) // only maps and wire structs
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": r.message(false)})
	send("ping", map[string]any{"type": "ping"})
	for i, b := range r.blocks {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": b.wire(false)})
		switch b.typ {
		case "text":
			for _, part := range chunks(b.text, 24) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part}})
			}
		case "tool_use":
			parts := append([]string{""}, chunks(string(b.input), 32)...)
			for _, part := range parts {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason, "stop_sequence": nil},
		"usage": r.usage.wire(r.usage.OutputTokens),
	})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// chunks splits s into pieces of about n bytes without splitting a rune.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 { // n is smaller than this rune
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// Rate-limit window names as the unified headers abbreviate them.
var windowAbbrev = map[string]string{
	"five_hour":                  "5h",
	"seven_day":                  "7d",
	"seven_day_overage_included": "7d_oi",
}

func writeError(w http.ResponseWriter, e *ErrorReply, now time.Time) {
	requestID := "req_fake_" + randomHex(10)
	typ := e.Type
	if typ == "" {
		typ = errorType(e.Status)
	}
	msg := e.Message
	if msg == "" {
		msg = defaultErrorMessage(typ)
	}
	h := w.Header()
	if u := e.UsageLimit; u != nil {
		reset := u.ResetsAt
		if reset == 0 {
			reset = now.Add(time.Duration(u.ResetsIn)).Unix()
		}
		resetStr := strconv.FormatInt(reset, 10)
		h.Set("anthropic-ratelimit-unified-status", "rejected")
		h.Set("anthropic-ratelimit-unified-reset", resetStr)
		h.Set("anthropic-ratelimit-unified-representative-claim", u.Claim)
		if ab, ok := windowAbbrev[u.Claim]; ok {
			h.Set("anthropic-ratelimit-unified-"+ab+"-status", "rejected")
			h.Set("anthropic-ratelimit-unified-"+ab+"-reset", resetStr)
			h.Set("anthropic-ratelimit-unified-"+ab+"-utilization", "1.0")
		}
		if wait := reset - now.Unix(); wait > 0 {
			h.Set("retry-after", strconv.FormatInt(wait, 10))
		}
	}
	for k, v := range e.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("request-id", requestID)
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type":       "error",
		"error":      map[string]string{"type": typ, "message": msg},
		"request_id": requestID,
	})
}
