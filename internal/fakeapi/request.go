package fakeapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Request is one HTTP request the fake received.
type Request struct {
	Time   time.Time
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte // raw, as received

	// Messages is the decoded body of a POST /v1/messages, or a Responses
	// or Gemini request translated into the same form; nil for other
	// requests and bodies that did not decode.
	Messages *MessagesRequest
	// Iteration and Turn say which script step answered (-1 when none did).
	Iteration, Turn int
}

// MessagesRequest is the part of a Messages API request body that tests
// check. Message and system content given as a plain string is normalised to
// a single text block.
type MessagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    Content         `json:"system"`
	Messages  []Message       `json:"messages"`
	Tools     []Tool          `json:"tools"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// Message is one conversation message.
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is a list of blocks that also accepts a bare string.
type Content []Block

// UnmarshalJSON implements json.Unmarshaler.
func (c *Content) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var blocks []Block
	if err := json.Unmarshal(b, &blocks); err != nil {
		return err
	}
	*c = blocks
	return nil
}

// Block is one content block: text, tool_use or tool_result (other types
// keep only their Type).
type Block struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   Content `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
}

// Tool is a tool the client offered.
type Tool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Text joins the text of the blocks, including text nested in tool results.
func (c Content) Text() string {
	var parts []string
	for _, b := range c {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_result":
			parts = append(parts, b.Content.Text())
		}
	}
	return strings.Join(parts, "\n")
}

// HasToolResult reports whether the content answers a tool call, which is
// what tells a continuation apart from a new prompt.
func (c Content) HasToolResult() bool {
	for _, b := range c {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// ToolResults returns the tool_result blocks.
func (c Content) ToolResults() []Block {
	var out []Block
	for _, b := range c {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

// ToolUses returns the tool_use blocks.
func (c Content) ToolUses() []Block {
	var out []Block
	for _, b := range c {
		if b.Type == "tool_use" {
			out = append(out, b)
		}
	}
	return out
}

// Conversation returns the user and assistant messages; clients may send
// other roles (Claude Code sometimes sends "system"), which the model API
// ignores and so does the fake.
func (r *MessagesRequest) Conversation() []Message {
	var out []Message
	for _, m := range r.Messages {
		if m.Role == "user" || m.Role == "assistant" {
			out = append(out, m)
		}
	}
	return out
}

// ToolNames lists the offered tools by name.
func (r *MessagesRequest) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// CountRole counts conversation messages with role.
func (r *MessagesRequest) CountRole(role string) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == role {
			n++
		}
	}
	return n
}

// Prompts returns the text of every plain user prompt: runs of user
// messages without tool results, consecutive ones joined, since clients
// split one prompt into several user messages (reminders, then the text).
func (r *MessagesRequest) Prompts() []string {
	var prompts []string
	inPrompt := false
	for _, m := range r.Conversation() {
		if m.Role != "user" || m.Content.HasToolResult() {
			inPrompt = false
			continue
		}
		if inPrompt {
			prompts[len(prompts)-1] += "\n" + m.Content.Text()
			continue
		}
		prompts = append(prompts, m.Content.Text())
		inPrompt = true
	}
	return prompts
}

// LastToolResult returns the text of the newest tool result, "" if none.
func (r *MessagesRequest) LastToolResult() string {
	conv := r.Conversation()
	for i := len(conv) - 1; i >= 0; i-- {
		if res := conv[i].Content.ToolResults(); len(res) > 0 {
			return res[len(res)-1].Content.Text()
		}
	}
	return ""
}

// LastToolResultIn is LastToolResult of a Messages API request's body, as
// a test reads what the model received.
func LastToolResultIn(body []byte) (string, error) {
	var r MessagesRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return "", err
	}
	return r.LastToolResult(), nil
}
