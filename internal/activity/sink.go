package activity

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// maxResultWidth bounds one shown line of a tool result.
const maxResultWidth = 160

// Options say how much a decoder shows.
type Options struct {
	// Dir is the project directory: paths inside it are shown relative to
	// it. An agent that names its own view of it (Claude's init event)
	// replaces it.
	Dir string
	// ResultLines is how many lines of a tool result are shown; 0 leaves
	// tool results out, as the live view does, and spares decoding them.
	ResultLines int
}

// Sink is where a decoder sends its events, with the helpers every
// decoder needs. It drops what only repeats: an error that is blank, the
// same as the previous error, or the agent's last words (CLIs report a
// failure as prose, as an error event, and again as the turn's failure).
type Sink struct {
	// Options are the decoder's; a decoder may update Dir.
	Options
	emit              func(Event)
	lastText, lastErr string
}

// NewSink returns a sink that passes events to emit.
func NewSink(opt Options, emit func(Event)) *Sink {
	return &Sink{Options: opt, emit: emit}
}

// Emit sends one event, unless it only repeats (see Sink).
func (s *Sink) Emit(e Event) {
	switch e.Kind {
	case Text:
		s.lastText = e.Text
	case Error:
		msg := strings.TrimSpace(e.Text)
		if msg == "" || msg == s.lastErr || msg == strings.TrimSpace(s.lastText) {
			return
		}
		s.lastErr, e.Text = msg, msg
	}
	s.emit(e)
}

// LastText is the agent's last words so far: a final answer that repeats
// them need not be shown again.
func (s *Sink) LastText() string { return s.lastText }

// Text sends the agent's prose, unless it is blank.
func (s *Sink) Text(t string) {
	if strings.TrimSpace(t) != "" {
		s.Emit(Event{Kind: Text, Text: t})
	}
}

// Error sends an error message.
func (s *Sink) Error(msg string) { s.Emit(Event{Kind: Error, Text: msg}) }

// Tool sends a tool call.
func (s *Sink) Tool(tool, target string) { s.Emit(Event{Kind: Tool, Tool: tool, Target: target}) }

// Results says whether tool results are shown at all: a decoder need not
// decode them otherwise.
func (s *Sink) Results() bool { return s.ResultLines > 0 }

// Result sends a tool's answer cut to its first lines. failure is empty
// for success, else what went wrong ("error", "exit 2").
func (s *Sink) Result(out, failure string) {
	if !s.Results() {
		return
	}
	t := shorten(out, s.ResultLines)
	switch {
	case failure != "" && t != "":
		t = "✖ " + failure + ": " + t
	case failure != "":
		t = "✖ " + failure
	case t == "":
		return
	}
	s.Emit(Event{Kind: ToolResult, Text: t})
}

// shorten keeps the first n lines of s, each cut to maxResultWidth, and
// says how many lines were left out.
func shorten(s string, n int) string {
	s = strings.Trim(s, "\r\n")
	if strings.TrimSpace(s) == "" {
		return ""
	}
	var kept []string
	rest := s
	for len(kept) < n {
		line, after, more := strings.Cut(rest, "\n")
		kept = append(kept, clip(strings.TrimRight(line, " \t\r"), maxResultWidth))
		if !more {
			rest = ""
			break
		}
		rest = after
	}
	out := strings.Join(kept, "\n")
	if rest != "" {
		more := strings.Count(rest, "\n") + 1
		out += fmt.Sprintf(" (%d more line%s)", more, plural(more))
	}
	return out
}

func clip(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	return string([]rune(s)[:width-1]) + "…"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Summary sends how a call or turn ended, its parts joined; empty parts
// are left out.
func (s *Sink) Summary(parts ...string) {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	if len(kept) > 0 {
		s.Emit(Event{Kind: Summary, Text: strings.Join(kept, " · ")})
	}
}

// Tokens says what a call used; cached tokens only when there were any.
func Tokens(in, out, cacheRead, cacheWrite int64) string {
	if in == 0 && out == 0 && cacheRead == 0 && cacheWrite == 0 {
		return ""
	}
	s := fmt.Sprintf("%d in / %d out tokens", in, out)
	switch {
	case cacheWrite > 0:
		s += fmt.Sprintf(" (%d cache read, %d cache write)", cacheRead, cacheWrite)
	case cacheRead > 0:
		s += fmt.Sprintf(" (%d cached)", cacheRead)
	}
	return s
}

// Count says "3 turns"; nothing for none.
func Count(n int, what string) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("%d %s%s", n, what, plural(n))
}

// Millis says how long something took in milliseconds; nothing for none.
func Millis(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// Object returns a line as the JSON object a decoder reads, or false: a
// line of text is sent as Output, a blank one is skipped.
func (s *Sink) Object(line []byte) ([]byte, bool) {
	b := bytes.TrimSpace(line)
	if len(b) == 0 {
		return nil, false
	}
	if b[0] != '{' {
		s.Emit(Event{Kind: Output, Text: string(b)})
		return nil, false
	}
	return b, true
}
