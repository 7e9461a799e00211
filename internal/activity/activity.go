// Package activity is ralph's own model of what an agent does during a
// call: its prose, its tool calls with their file or command, their
// results, its errors, and how the call ended. Each agent's wire package
// (internal/agent/<name>/wire) reads that agent's output in one place and
// turns it into these events, which the live view, `ralph logs` and the
// dashboard show, and into Facts, which the analyzer judges — whatever
// agent wrote the output. What the formats share (the names of a tool
// input's command and file, of token counts, the tools that write files,
// the members of an event that Codex and Gemini CLI write alike) is read
// here, once for all of them.
package activity

import (
	"io"
	"strings"
	"sync"
)

// Kind is the kind of an Event.
type Kind string

// Kinds of events. The live view shows the first four; a saved log also
// shows tool results and summaries.
const (
	Text       Kind = "text"        // a chunk of the agent's own prose
	Tool       Kind = "tool"        // a tool call: Tool and Target
	Output     Kind = "output"      // a raw line of unstructured output
	Error      Kind = "error"       // the agent reported a failure
	ToolResult Kind = "tool_result" // a tool's answer, already cut to its first lines
	Summary    Kind = "summary"     // how the call or a turn ended: status, time, tokens, cost
)

// Event is one thing an agent did, already reduced from its wire format.
type Event struct {
	Kind Kind
	// Text is the prose, output line, error message, shortened tool result
	// or summary.
	Text string
	// Tool and Target describe a tool call: "Write" "hello.txt", "Bash" "go
	// test ./...". Target is already shortened.
	Tool, Target string
}

// Live says whether the live view shows events of this kind: tool results
// echo whole files and command output, and summaries repeat what the loop
// reports anyway.
func (k Kind) Live() bool {
	switch k {
	case Text, Tool, Output, Error:
		return true
	}
	return false
}

// String renders the event as terminal lines, ending in a newline.
func (e Event) String() string {
	var s string
	switch e.Kind {
	case Tool:
		s = "⚡ " + e.Tool
		if e.Target != "" {
			s += " " + e.Target
		}
	case Error:
		s = "✖ " + e.Text
	case ToolResult:
		s = "  ↳ " + strings.ReplaceAll(e.Text, "\n", "\n    ")
	case Summary:
		s = "── " + e.Text
	default:
		s = e.Text
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// LiveOnly passes on only the events the live view shows.
func LiveOnly(emit func(Event)) func(Event) {
	return func(e Event) {
		if e.Kind.Live() {
			emit(e)
		}
	}
}

// Render returns an emit func that prints events to w (the terminal).
// Writes are serialised, so one renderer may serve several concurrent
// loops without interleaving inside a line.
func Render(w io.Writer) func(Event) {
	var mu sync.Mutex
	return func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, e.String())
	}
}

// Decoder turns one agent's output into events, line by line, sending
// them to the Sink it was made with.
type Decoder interface {
	// Line decodes one line of output, without its newline.
	Line(line []byte)
	// Flush sends what the decoder still holds at the end of the output.
	Flush()
}
