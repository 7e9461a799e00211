// Package fakeapi is a fake model API for running real agent CLIs offline:
// the Anthropic Messages API (Claude Code), the OpenAI Responses API
// (Codex) and the Gemini API (Gemini CLI), told apart by request path. It
// answers from a Script: a list of iterations, each a list of turns, so one
// fake can play a whole multi-iteration ralph run, including resumed
// sessions, tool calls and usage-limit rejections, in any of the protocols.
// It binds to 127.0.0.1 only.
package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Script decides the fake's replies.
//
// Every request whose last user message is a plain prompt (no tool_result)
// starts the next iteration, whether it is a fresh session or a resumed one;
// a request that carries tool results continues the iteration and turn that
// issued the tool calls (the fake recognises its own tool_use ids). With
// Mode "stateless" the iteration is instead the number of plain prompts in
// the request minus one, and the turn the number of assistant messages since
// the last plain prompt: no server state, but every fresh session replays
// iteration 0.
type Script struct {
	Mode       string      `json:"mode,omitempty"`        // "" or "sequential" (default), "stateless"
	Model      string      `json:"model,omitempty"`       // model reported in replies; default: the requested one
	RepeatLast bool        `json:"repeat_last,omitempty"` // after the last iteration, keep replaying it
	Iterations []Iteration `json:"iterations"`
}

// Modes of Script.Mode.
const (
	ModeSequential = "sequential"
	ModeStateless  = "stateless"
)

// Iteration is one agent call: the turns of one prompt, in order. Every turn
// but the last should call a tool, because a reply without tool calls ends
// the agent's turn and later turns would never be asked for.
type Iteration struct {
	Turns []Turn `json:"turns"`
}

// Turn is one model reply: text and/or tool calls (text first, as models
// write it), or an error reply.
//
// Text may contain {{prompt}} (the last plain user prompt),
// {{tool_result}} (the text of the last tool result), {{iteration}} and
// {{turn}} (zero-based), replaced when the reply is sent.
type Turn struct {
	Text       string            `json:"text,omitempty"`
	ToolUses   []ToolUse         `json:"tool_uses,omitempty"`
	StopReason string            `json:"stop_reason,omitempty"` // default: tool_use or end_turn
	Usage      *Usage            `json:"usage,omitempty"`       // default: estimated from sizes
	Headers    map[string]string `json:"headers,omitempty"`     // extra response headers
	Delay      Duration          `json:"delay,omitempty"`       // wait before answering
	Error      *ErrorReply       `json:"error,omitempty"`
}

// ToolUse is one tool call; Input must be a JSON object.
type ToolUse struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Usage is what the reply reports as token usage.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
}

// ErrorReply is an HTTP error in the Anthropic format:
// {"type":"error","error":{"type":...,"message":...}}.
type ErrorReply struct {
	Status     int               `json:"status"`
	Type       string            `json:"type,omitempty"` // default derived from Status
	Message    string            `json:"message,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	UsageLimit *UsageLimit       `json:"usage_limit,omitempty"`
}

// UsageLimit adds the unified rate-limit headers a subscription account gets
// when a usage window is exhausted. Exactly one of ResetsAt and ResetsIn is
// expected; ResetsIn is measured from the server clock when the reply is sent.
// The Responses API reports it as a usage_limit_reached error with
// resets_at, the Gemini API as RESOURCE_EXHAUSTED with Claim as the quota id
// and the time left as the retry delay.
type UsageLimit struct {
	Claim    string   `json:"claim"`               // five_hour, seven_day, ...
	ResetsAt int64    `json:"resets_at,omitempty"` // epoch seconds
	ResetsIn Duration `json:"resets_in,omitempty"`
}

// Duration reads from JSON as a Go duration string ("1.5s") or a number of
// seconds.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	secs, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("duration %s: want a string like \"2s\" or a number of seconds", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// ParseScript reads a script from JSON. Unknown fields are errors so that a
// misspelt key does not silently change a test.
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("parse script: %w", err)
	}
	if err := s.Validate(); err != nil {
		return Script{}, err
	}
	return s, nil
}

// LoadScript reads a script from a JSON file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("load script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Validate reports the first mistake that would make the fake misbehave
// rather than fail loudly.
func (s Script) Validate() error {
	switch s.Mode {
	case "", ModeSequential, ModeStateless:
	default:
		return fmt.Errorf("script: unknown mode %q", s.Mode)
	}
	var errs []error
	for i, it := range s.Iterations {
		if len(it.Turns) == 0 {
			errs = append(errs, fmt.Errorf("iteration %d: no turns", i))
		}
		for j, t := range it.Turns {
			if err := t.validate(); err != nil {
				errs = append(errs, fmt.Errorf("iteration %d turn %d: %w", i, j, err))
			}
		}
	}
	return errors.Join(errs...)
}

func (t Turn) validate() error {
	if t.Delay < 0 {
		return errors.New("negative delay")
	}
	if t.Error != nil {
		if t.Text != "" || len(t.ToolUses) > 0 {
			return errors.New("an error turn cannot also have text or tool uses")
		}
		if t.Error.Status < 400 || t.Error.Status > 599 {
			return fmt.Errorf("error status %d is not an HTTP error", t.Error.Status)
		}
		if u := t.Error.UsageLimit; u != nil && u.Claim == "" {
			return errors.New("usage_limit needs a claim such as five_hour")
		}
		return nil
	}
	if t.Text == "" && len(t.ToolUses) == 0 {
		return errors.New("a turn needs text, tool_uses or error")
	}
	for k, tu := range t.ToolUses {
		if tu.Name == "" {
			return fmt.Errorf("tool use %d: no name", k)
		}
		var obj map[string]any
		if err := json.Unmarshal(tu.Input, &obj); err != nil || obj == nil {
			return fmt.Errorf("tool use %d (%s): input must be a JSON object", k, tu.Name)
		}
	}
	return nil
}

// TextTurn is a reply with text only, which ends the agent's turn.
func TextTurn(text string) Turn { return Turn{Text: text} }

// ToolTurn is a reply that says text (may be empty) and calls one tool.
// It panics if input cannot be encoded as JSON, like regexp.MustCompile:
// scripts are written as literals.
func ToolTurn(text, name string, input any) Turn {
	raw, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("fakeapi.ToolTurn(%q): %v", name, err))
	}
	return Turn{Text: text, ToolUses: []ToolUse{{Name: name, Input: raw}}}
}

// ErrorTurn is an HTTP error reply with the default error type for status.
func ErrorTurn(status int, message string) Turn {
	return Turn{Error: &ErrorReply{Status: status, Message: message}}
}

// UsageLimitTurn is the 429 a subscription account gets when the claim
// window (five_hour, seven_day, ...) is used up until resetsAt.
func UsageLimitTurn(claim string, resetsAt time.Time) Turn {
	return Turn{Error: &ErrorReply{
		Status:     429,
		UsageLimit: &UsageLimit{Claim: claim, ResetsAt: resetsAt.Unix()},
	}}
}

// errorType is the Anthropic error type the real API uses for status.
func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

// defaultErrorMessage mirrors the real API's wording closely enough for an
// agent CLI to print something recognisable.
func defaultErrorMessage(typ string) string {
	switch typ {
	case "rate_limit_error":
		return "This request would exceed your account's rate limit. Please try again later."
	case "overloaded_error":
		return "Overloaded"
	case "authentication_error":
		return "invalid x-api-key"
	default:
		return strings.ReplaceAll(typ, "_", " ")
	}
}
