package opencode

import (
	"bytes"
	"encoding/json"
	"strings"

	"ralph/internal/agent"
)

// event is one line of `opencode run --format json`: {"type", "timestamp",
// "sessionID"} plus "part" (a message part) or "error". Only the members
// ralph reads are decoded; a tool's output stays raw until needed.
type event struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionID"`
	Part      part            `json:"part"`
	Error     json.RawMessage `json:"error"`
}

type part struct {
	Type      string `json:"type"`
	MessageID string `json:"messageID"`
	Text      string `json:"text"`
	Tool      string `json:"tool"`
	State     struct {
		Status   string          `json:"status"`
		Input    json.RawMessage `json:"input"`
		Output   json.RawMessage `json:"output"`
		Error    string          `json:"error"`
		Metadata struct {
			Exit *int `json:"exit"`
		} `json:"metadata"`
	} `json:"state"`
	Cost   float64 `json:"cost"`
	Tokens struct {
		Input     int64 `json:"input"`
		Output    int64 `json:"output"`
		Reasoning int64 `json:"reasoning"`
		Cache     struct {
			Read  int64 `json:"read"`
			Write int64 `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
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

// rejected says whether a failed tool call was a permission OpenCode
// refused: `run` rejects every request it would have to ask about.
func rejected(toolError string) bool {
	return strings.Contains(toolError, "rejected permission")
}

// LiveParser returns a Process.OnLine that turns `opencode run --format
// json` lines into live events for emit: the agent's text, its tool calls
// with their file or command, refused tools and errors. dir makes file
// targets relative. Tool output is never shown.
func LiveParser(dir string, emit func(agent.LiveEvent)) func(line []byte) {
	return func(b []byte) {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			return
		}
		if b[0] != '{' {
			emit(agent.LiveEvent{Kind: agent.LiveOutput, Text: string(b)})
			return
		}
		var ev event
		if json.Unmarshal(b, &ev) != nil {
			return // a line cut for length, or not JSON after all
		}
		switch ev.Type {
		case "text":
			if strings.TrimSpace(ev.Part.Text) != "" {
				emit(agent.LiveEvent{Kind: agent.LiveText, Text: ev.Part.Text})
			}
		case "tool_use":
			target := agent.ToolTarget(ev.Part.State.Input, dir)
			if ev.Part.State.Status == "error" && rejected(ev.Part.State.Error) {
				msg := "permission denied: " + ev.Part.Tool
				if target != "" {
					msg += " " + target
				}
				emit(agent.LiveEvent{Kind: agent.LiveError, Text: msg})
				return
			}
			emit(agent.LiveEvent{Kind: agent.LiveTool, Tool: ev.Part.Tool, Target: target})
		case "error":
			var e apiError
			_ = json.Unmarshal(ev.Error, &e)
			emit(agent.LiveEvent{Kind: agent.LiveError, Text: e.message()})
		}
	}
}
