package opencode

import (
	"bytes"
	"strings"

	"ralph/internal/agent"
)

// LiveParser returns a Process.OnLine that turns `opencode run --format
// json` lines into live events for emit: the agent's text, its tool calls
// with their file or command, refused tools and errors. dir makes file
// targets relative. Tool output is never shown.
func LiveParser(dir string, emit func(agent.LiveEvent)) func(line []byte) {
	return func(b []byte) { ParseLive(b, dir, emit) }
}

// ParseLive renders one line as the live view shows it.
func ParseLive(line []byte, dir string, emit func(agent.LiveEvent)) {
	b := bytes.TrimSpace(line)
	if len(b) == 0 {
		return
	}
	if b[0] != '{' {
		emit(agent.LiveEvent{Kind: agent.LiveOutput, Text: string(b)})
		return
	}
	if ev, ok := ParseEvent(b); ok {
		ev.Live(dir, emit)
	} // else a line cut for length, or not JSON after all
}

// Live renders the event as the live view shows it: the agent's text, a
// tool call with its file or command, a refused tool, an error. The
// renderer of saved logs adds tool results and step totals to these.
func (e Event) Live(dir string, emit func(agent.LiveEvent)) {
	switch e.Type {
	case "text":
		if strings.TrimSpace(e.Part.Text) != "" {
			emit(agent.LiveEvent{Kind: agent.LiveText, Text: e.Part.Text})
		}
	case "tool_use":
		target := agent.ToolTarget(e.Part.State.Input, dir)
		if e.Part.Rejected() {
			msg := "permission denied: " + e.Part.Tool
			if target != "" {
				msg += " " + target
			}
			emit(agent.LiveEvent{Kind: agent.LiveError, Text: msg})
			return
		}
		emit(agent.LiveEvent{Kind: agent.LiveTool, Tool: e.Part.Tool, Target: target})
	case "error":
		emit(agent.LiveEvent{Kind: agent.LiveError, Text: e.ErrorMessage()})
	}
}
