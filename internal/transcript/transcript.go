// Package transcript renders an agent's saved output for people: its prose,
// one line per tool call, tool results cut to their first lines, errors,
// and how the call ended (usage and cost). It tells the formats apart by
// their content, since the log of an iteration does not say which agent
// wrote it, and leaves each format to its agent's wire package: Claude
// Code json and stream-json, Codex `exec --json`, Gemini CLI json and
// stream-json, OpenCode `run --format json`. Plain text is shown as it is.
package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"

	"ralph/internal/activity"
	claudewire "ralph/internal/agent/claude/wire"
	codexwire "ralph/internal/agent/codex/wire"
	geminiwire "ralph/internal/agent/gemini/wire"
	opencodewire "ralph/internal/agent/opencode/wire"
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

const (
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

// Render renders a whole transcript.
func Render(transcript []byte, opt Options) []activity.Event {
	var evs []activity.Event
	r := NewRenderer(opt, func(e activity.Event) { evs = append(evs, e) })
	_, _ = r.Write(transcript)
	r.Flush()
	return evs
}

// Detect tells the format of a transcript, or of its beginning.
func Detect(transcript []byte) Format {
	r := NewRenderer(Options{}, func(activity.Event) {})
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
	sink    *activity.Sink
	format  Format
	dec     activity.Decoder // the format's, once it is known
	partial []byte           // a line not yet ended; cut at maxLine
	doc     []byte           // a pretty-printed JSON document being gathered
	inDoc   bool
}

// NewRenderer returns a renderer that passes each rendered line to emit.
func NewRenderer(opt Options, emit func(activity.Event)) *Renderer {
	return &Renderer{sink: activity.NewSink(activity.Options{Dir: opt.Dir, ResultLines: max(opt.ResultLines, 1)}, emit)}
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

// flushText shows what the format's decoder still holds (Gemini's text).
func (r *Renderer) flushText() {
	if r.dec != nil {
		r.dec.Flush()
	}
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
		r.sink.Emit(activity.Event{Kind: activity.Output, Text: string(line)})
	case r.format == FormatUnknown && string(t) == "{":
		// Gemini's json output is indented over many lines.
		r.inDoc = true
		r.doc = append(r.doc[:0], "{\n"...)
	case !json.Valid(t):
		if r.format == FormatUnknown {
			r.format = FormatText
			r.sink.Emit(activity.Event{Kind: activity.Output, Text: string(line)})
			return
		}
		r.sink.Emit(activity.Event{Kind: activity.Output, Text: fmt.Sprintf("[a cut-off JSON line of %d bytes]", len(t))})
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
		r.sink.Emit(activity.Event{Kind: activity.Output, Text: string(bytes.TrimRight(l, "\n"))})
	}
	r.doc = nil
}

// object renders one JSON event (or a whole JSON document) with the
// decoder of its format.
func (r *Renderer) object(b []byte) {
	if r.format == FormatUnknown {
		r.format = classify(b)
		r.dec = r.decoder()
	}
	switch {
	case r.format == FormatGeminiJSON:
		geminiwire.NewDecoder(r.sink).Document(b)
	case r.dec != nil:
		r.dec.Line(b)
	default:
		// An event both Codex and Gemini send first, when they fail early;
		// any other object no agent writes is shown as it is.
		var ev struct{ Type, Message string }
		if json.Unmarshal(b, &ev) == nil && ev.Type == "error" {
			r.sink.Error(ev.Message)
			return
		}
		r.sink.Emit(activity.Event{Kind: activity.Output, Text: string(b)})
	}
}

// decoder is the wire decoder of the transcript's format, nil when there
// is none to decode line by line.
func (r *Renderer) decoder() activity.Decoder {
	switch r.format {
	case FormatClaudeJSON, FormatClaudeStream:
		return claudewire.NewDecoder(r.sink)
	case FormatCodexJSON:
		return codexwire.NewDecoder(r.sink)
	case FormatGeminiStream:
		return geminiwire.NewDecoder(r.sink)
	case FormatOpenCode:
		return opencodewire.NewDecoder(r.sink)
	}
	return nil
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
	if opencodewire.IsEvent(b) { // its "text", "tool_use" and "error" are Gemini's and Codex's names too
		return FormatOpenCode
	}
	switch {
	case claudewire.Is(h.Type):
		return FormatClaudeStream
	case codexwire.Is(h.Type):
		return FormatCodexJSON
	case geminiwire.Is(h.Type):
		return FormatGeminiStream
	case h.Type == "result" && h.Stats != nil:
		return FormatGeminiStream
	case h.Type == "result":
		return FormatClaudeJSON
	case h.Type == "" && (h.Response != nil || h.Stats != nil || h.Error != nil):
		return FormatGeminiJSON
	}
	return FormatUnknown
}
