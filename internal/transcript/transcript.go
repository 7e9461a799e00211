// Package transcript renders an agent's saved output for people: its prose,
// one line per tool call, tool results cut to their first lines, errors,
// and how the call ended (usage and cost). It reads Claude Code json and
// stream-json, Codex `exec --json`, Gemini CLI json and stream-json,
// OpenCode `run --format json`, and plain text, and tells them apart by
// their content: the log of an iteration does not say which agent wrote it.
//
// Lines are agent.LiveEvents, the model of the live view, plus two kinds
// of this package's own; Line turns any of them into text.
package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"ralph/internal/agent"
	"ralph/internal/agent/opencode"
)

// Format is the kind of output a transcript holds.
type Format string

// Formats Detect tells apart.
const (
	FormatUnknown      Format = "" // nothing to go by yet
	FormatText         Format = "text"
	FormatClaudeJSON   Format = "claude-json"
	FormatClaudeStream Format = "claude-stream-json"
	FormatCodexJSON    Format = "codex-json"
	FormatGeminiJSON   Format = "gemini-json"
	FormatGeminiStream Format = "gemini-stream-json"
	FormatOpenCode     Format = "opencode-json"
)

// Kinds of lines beyond agent's.
const (
	// ToolResult is a tool's answer, already cut to its first lines.
	ToolResult agent.LiveKind = "tool_result"
	// Summary is how the call or turn ended: status, turns, time, tokens, cost.
	Summary agent.LiveKind = "summary"
)

const (
	// maxResultWidth bounds one shown line of a tool result.
	maxResultWidth = 160
	// maxLine bounds the part of a line that is kept; longer lines are tool
	// output echoed into the transcript and are cut.
	maxLine = 16 << 20
	// maxDocument bounds a pretty-printed JSON document gathered whole.
	maxDocument = 16 << 20
)

// Options adjust the rendering.
type Options struct {
	// Dir is the project directory: paths inside it are shown relative to
	// it. Claude's init event, which knows better, replaces it.
	Dir string
	// ResultLines is how many lines of a tool result are shown; 0 means 1.
	ResultLines int
}

// Line renders one line of a transcript as text ending in a newline.
func Line(e agent.LiveEvent) string {
	switch e.Kind {
	case ToolResult:
		return "  ↳ " + strings.ReplaceAll(e.Text, "\n", "\n    ") + "\n"
	case Summary:
		return "── " + e.Text + "\n"
	}
	return e.String()
}

// Render renders a whole transcript.
func Render(transcript []byte, opt Options) []agent.LiveEvent {
	var evs []agent.LiveEvent
	r := NewRenderer(opt, func(e agent.LiveEvent) { evs = append(evs, e) })
	_, _ = r.Write(transcript)
	r.Flush()
	return evs
}

// Detect tells the format of a transcript, or of its beginning.
func Detect(transcript []byte) Format {
	r := NewRenderer(Options{}, func(agent.LiveEvent) {})
	for line := range bytes.Lines(transcript) {
		r.feed(line)
		if r.format != FormatUnknown && !r.inDoc {
			return r.format
		}
	}
	r.Flush()
	return r.format
}

// Renderer renders a transcript as it is written to it, so a log that is
// still growing can be followed. Write it the bytes; Flush at the end.
type Renderer struct {
	opt      Options
	emit     func(agent.LiveEvent)
	format   Format
	dir      string
	partial  []byte // a line not yet ended; cut at maxLine
	doc      []byte // a pretty-printed JSON document being gathered
	inDoc    bool
	lastText string          // the agent's last words: results and errors repeat them
	lastErr  string          // errors come twice (an event, then the turn's failure)
	pending  strings.Builder // Gemini's message deltas, joined into one text
	shown    map[string]bool // Codex items whose call is already shown
}

// NewRenderer returns a renderer that passes each rendered line to emit.
func NewRenderer(opt Options, emit func(agent.LiveEvent)) *Renderer {
	if opt.ResultLines <= 0 {
		opt.ResultLines = 1
	}
	return &Renderer{opt: opt, emit: emit, dir: opt.Dir, shown: map[string]bool{}}
}

// Format is the transcript's format as far as it is known.
func (r *Renderer) Format() Format { return r.format }

// Write renders the complete lines in p and keeps the rest for later.
func (r *Renderer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.keep(p)
			break
		}
		r.keep(p[:i])
		r.feed(r.partial)
		r.partial, p = r.partial[:0], p[i+1:]
	}
	return n, nil
}

func (r *Renderer) keep(p []byte) {
	if room := maxLine - len(r.partial); len(p) > room {
		p = p[:max(room, 0)]
	}
	r.partial = append(r.partial, p...)
}

// Flush renders what is left: a last line without its newline, a document
// still open, Gemini text not yet shown.
func (r *Renderer) Flush() {
	if len(r.partial) > 0 {
		r.feed(r.partial)
		r.partial = r.partial[:0]
	}
	if r.inDoc {
		r.inDoc = false
		if json.Valid(r.doc) {
			r.object(r.doc)
		} else {
			r.docAsText()
		}
	}
	r.flushText()
}

func (r *Renderer) feed(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if r.inDoc {
		r.docLine(line)
		return
	}
	t := bytes.TrimSpace(line)
	switch {
	case len(t) == 0:
	case t[0] != '{' || r.format == FormatText:
		if r.format == FormatUnknown {
			r.format = FormatText
		}
		r.flushText()
		r.send(agent.LiveEvent{Kind: agent.LiveOutput, Text: string(line)})
	case r.format == FormatUnknown && string(t) == "{":
		// Gemini's json output is indented over many lines.
		r.inDoc = true
		r.doc = append(r.doc[:0], "{\n"...)
	case !json.Valid(t):
		if r.format == FormatUnknown {
			r.format = FormatText
			r.send(agent.LiveEvent{Kind: agent.LiveOutput, Text: string(line)})
			return
		}
		r.send(agent.LiveEvent{Kind: agent.LiveOutput, Text: fmt.Sprintf("[a cut-off JSON line of %d bytes]", len(t))})
	default:
		r.object(t)
	}
}

func (r *Renderer) docLine(line []byte) {
	r.doc = append(append(r.doc, line...), '\n')
	if len(r.doc) > maxDocument {
		r.inDoc = false
		r.docAsText()
		return
	}
	if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '}' && json.Valid(r.doc) {
		r.inDoc = false
		r.object(r.doc)
	}
}

// docAsText shows a document that turned out not to be JSON as it is.
func (r *Renderer) docAsText() {
	r.format = FormatText
	for l := range bytes.Lines(r.doc) {
		r.send(agent.LiveEvent{Kind: agent.LiveOutput, Text: string(bytes.TrimRight(l, "\n"))})
	}
	r.doc = nil
}

// object renders one JSON event (or a whole JSON document).
func (r *Renderer) object(b []byte) {
	if r.format == FormatUnknown {
		r.format = classify(b)
	}
	switch r.format {
	case FormatClaudeJSON, FormatClaudeStream:
		r.claude(b)
	case FormatCodexJSON:
		r.codex(b)
	case FormatGeminiStream:
		r.gemini(b)
	case FormatGeminiJSON:
		r.geminiDocument(b)
	case FormatOpenCode:
		r.opencode(b)
	default:
		// An event both Codex and Gemini send first, when they fail early;
		// any other object no agent writes is shown as it is.
		var ev struct{ Type, Message string }
		if json.Unmarshal(b, &ev) == nil && ev.Type == "error" {
			r.errorOnce(ev.Message)
			return
		}
		r.send(agent.LiveEvent{Kind: agent.LiveOutput, Text: string(b)})
	}
}

// classify names the format an event belongs to, or FormatUnknown when
// more than one format uses it.
func classify(b []byte) Format {
	var h struct {
		Type     string          `json:"type"`
		Stats    json.RawMessage `json:"stats"`
		Response json.RawMessage `json:"response"`
		Error    json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &h) != nil {
		return FormatUnknown
	}
	if opencode.IsEvent(b) { // its "text", "tool_use" and "error" are Gemini's and Codex's names too
		return FormatOpenCode
	}
	switch h.Type {
	case "system", "assistant", "user", "rate_limit_event", "stream_event":
		return FormatClaudeStream
	case "result":
		if h.Stats != nil {
			return FormatGeminiStream
		}
		return FormatClaudeJSON
	case "init", "message", "tool_use", "tool_result":
		return FormatGeminiStream
	case "":
		if h.Response != nil || h.Stats != nil || h.Error != nil {
			return FormatGeminiJSON
		}
	}
	for _, p := range []string{"thread.", "turn.", "item."} {
		if strings.HasPrefix(h.Type, p) {
			return FormatCodexJSON
		}
	}
	return FormatUnknown
}

func (r *Renderer) send(e agent.LiveEvent) {
	if e.Kind == agent.LiveText {
		r.lastText = e.Text
	}
	r.emit(e)
}

func (r *Renderer) text(s string) {
	if strings.TrimSpace(s) != "" {
		r.send(agent.LiveEvent{Kind: agent.LiveText, Text: s})
	}
}

// errorOnce shows an error unless it repeats the last one or the agent's
// last words.
func (r *Renderer) errorOnce(msg string) {
	msg = strings.TrimSpace(msg)
	if msg == "" || msg == r.lastErr || msg == strings.TrimSpace(r.lastText) {
		return
	}
	r.lastErr = msg
	r.send(agent.LiveEvent{Kind: agent.LiveError, Text: msg})
}

// toolResult shows the first lines of a tool's answer. failure is empty
// for success, else what went wrong ("error", "exit 2").
func (r *Renderer) toolResult(out, failure string) {
	s := shorten(out, r.opt.ResultLines)
	switch {
	case failure != "" && s != "":
		s = "✖ " + failure + ": " + s
	case failure != "":
		s = "✖ " + failure
	case s == "":
		return
	}
	r.send(agent.LiveEvent{Kind: ToolResult, Text: s})
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

// summary shows how a call or turn ended; empty parts are left out.
func (r *Renderer) summary(parts ...string) {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	if len(kept) > 0 {
		r.send(agent.LiveEvent{Kind: Summary, Text: strings.Join(kept, " · ")})
	}
}

// tokens says what a call used; cached tokens only when there were any.
func tokens(in, out, cacheRead, cacheWrite int64) string {
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

func count(n int, what string) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("%d %s%s", n, what, plural(n))
}
