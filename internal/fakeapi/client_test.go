package fakeapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A plain net/http client playing the part of an agent CLI.

type msg = map[string]any

// post sends body to path and returns the response with its body read.
func post(t *testing.T, url, path string, body any) (*http.Response, []byte) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+path, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// messagesBody is a request body shaped like Claude Code's: a system prompt
// as blocks, tools, and the conversation.
func messagesBody(stream bool, messages []msg) msg {
	return msg{
		"model":      "claude-test-1",
		"max_tokens": 32000,
		"stream":     stream,
		"system":     []msg{{"type": "text", "text": "You are a test."}},
		"tools":      []msg{{"name": "Write", "input_schema": msg{"type": "object"}}, {"name": "Bash", "input_schema": msg{"type": "object"}}},
		"messages":   messages,
	}
}

// freshPrompt is the opening of a new session as Claude Code sends it: one
// user message with a reminder block and the prompt, then a system message.
func freshPrompt(prompt string) []msg {
	return []msg{
		{"role": "user", "content": []msg{
			{"type": "text", "text": "<system-reminder>be brief</system-reminder>"},
			{"type": "text", "text": prompt},
		}},
		{"role": "system", "content": "# Environment\nworking directory: /x"},
	}
}

// jsonReply is a non-streaming Messages API reply.
type jsonReply struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Role       string `json:"role"`
	Model      string `json:"model"`
	StopReason string `json:"stop_reason"`
	Content    []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	Usage wireUsage `json:"usage"`
}

func (r jsonReply) text() string {
	var parts []string
	for _, b := range r.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "")
}

// assistant turns a reply back into the message a client appends.
func (r jsonReply) assistant() msg {
	var blocks []msg
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			blocks = append(blocks, msg{"type": "text", "text": b.Text})
		case "tool_use":
			blocks = append(blocks, msg{"type": "tool_use", "id": b.ID, "name": b.Name, "input": b.Input})
		}
	}
	return msg{"role": "assistant", "content": blocks}
}

// toolResults answers every tool call of the reply with output.
func (r jsonReply) toolResults(output string) msg {
	var blocks []msg
	for _, b := range r.Content {
		if b.Type == "tool_use" {
			blocks = append(blocks, msg{"type": "tool_result", "tool_use_id": b.ID, "content": output})
		}
	}
	return msg{"role": "user", "content": blocks}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data map[string]any
}

// readSSE parses an event stream strictly: every event is "event:" then
// "data:" then a blank line, and data is a JSON object whose type matches
// the event name.
func readSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var events []sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, ok := strings.CutPrefix(line, "event: ")
		if !ok {
			t.Fatalf("want an event line, got %q", line)
		}
		if !sc.Scan() {
			t.Fatalf("event %s without data", name)
		}
		raw, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			t.Fatalf("want a data line after event %s, got %q", name, sc.Text())
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(raw), &data); err != nil {
			t.Fatalf("event %s data: %v", name, err)
		}
		if data["type"] != name {
			t.Fatalf("event %s carries type %v", name, data["type"])
		}
		if !sc.Scan() || sc.Text() != "" {
			t.Fatalf("event %s not terminated by a blank line", name)
		}
		events = append(events, sseEvent{name, data})
	}
	return events
}

// num reads a JSON number at a path of object keys.
func num(t *testing.T, m map[string]any, path ...string) int {
	t.Helper()
	var cur any = m
	for _, k := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%v: %v is not an object", path, cur)
		}
		cur = obj[k]
	}
	f, ok := cur.(float64)
	if !ok {
		t.Fatalf("%v = %v, not a number", path, cur)
	}
	return int(f)
}
