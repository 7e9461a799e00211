package agent

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// LiveKind is the kind of a LiveEvent.
type LiveKind string

// Kinds of live events.
const (
	LiveText   LiveKind = "text"   // a chunk of the agent's own prose
	LiveTool   LiveKind = "tool"   // a tool call: Tool and Target
	LiveOutput LiveKind = "output" // a raw line of unstructured output
	LiveError  LiveKind = "error"  // the agent reported a failure
)

// MaxTargetLen is how much of a tool target a live line shows.
const MaxTargetLen = 80

// LiveEvent is one thing worth showing while the agent runs, already
// reduced from the agent's wire format. Tool results are never events: they
// echo whole files and command output.
type LiveEvent struct {
	Kind LiveKind
	// Text is the prose, output line or error message.
	Text string
	// Tool and Target describe a tool call: "Write" "hello.txt",
	// "Bash" "go test ./...". Target is already shortened.
	Tool, Target string
}

// String renders the event as terminal lines, ending in a newline.
func (e LiveEvent) String() string {
	var s string
	switch e.Kind {
	case LiveTool:
		s = "⚡ " + e.Tool
		if e.Target != "" {
			s += " " + e.Target
		}
	case LiveError:
		s = "✖ " + e.Text
	default:
		s = e.Text
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// RenderLive returns an Invocation.OnEvent that prints events to w (the
// terminal). Writes are serialised, so one renderer may serve several
// concurrent loops without interleaving inside a line.
func RenderLive(w io.Writer) func(LiveEvent) {
	var mu sync.Mutex
	return func(e LiveEvent) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, e.String())
	}
}

// ShortTarget makes a tool target fit one live line: first line only,
// blanks collapsed, at most MaxTargetLen characters with an ellipsis.
func ShortTarget(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= MaxTargetLen {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:MaxTargetLen-1]), " ") + "…"
}
