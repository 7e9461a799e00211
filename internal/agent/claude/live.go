package claude

import (
	"bytes"
	"encoding/json"
	"strings"

	"ralph/internal/agent"
)

// liveParser turns stream-json lines into live events as they arrive. It
// runs on the Runner's line goroutine, one line at a time.
type liveParser struct {
	// dir makes file targets relative; the init event's cwd replaces it,
	// being the CLI's own view of the directory (symlinks resolved).
	dir      string
	emit     func(agent.LiveEvent)
	lastText string
}

func newLiveParser(dir string, emit func(agent.LiveEvent)) *liveParser {
	return &liveParser{dir: dir, emit: emit}
}

// LiveParser returns a Process.OnLine that turns stream-json lines into
// live events for emit; dir makes file targets relative until the init
// event names the CLI's own view of it.
func LiveParser(dir string, emit func(agent.LiveEvent)) func(line []byte) {
	return newLiveParser(dir, emit).line
}

// ParseLive renders a whole stream-json transcript, as Run does line by line
// while the agent runs: replays of saved logs and tests use it.
func ParseLive(transcript []byte, dir string, emit func(agent.LiveEvent)) {
	p := newLiveParser(dir, emit)
	for line := range bytes.Lines(transcript) {
		p.line(bytes.TrimRight(line, "\r\n"))
	}
}

// event is the part of a stream-json line the live view needs. Tool
// results (user events) are never decoded beyond their type.
type event struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Cwd     string `json:"cwd"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	IsError           bool            `json:"is_error"`
	Result            *string         `json:"result"`
	Errors            json.RawMessage `json:"errors"`
	PermissionDenials []struct {
		ToolName  string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	} `json:"permission_denials"`
}

type block struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

func (p *liveParser) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	if b[0] != '{' {
		// Text output, or something the CLI printed besides its events.
		p.emit(agent.LiveEvent{Kind: agent.LiveOutput, Text: string(b)})
		return
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &head) != nil {
		return // a line cut for length, or not JSON after all
	}
	switch head.Type {
	case "system", "assistant", "result":
	default:
		return // user (tool results), rate_limit_event, stream events
	}
	var ev event
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" && ev.Cwd != "" {
			p.dir = ev.Cwd
		}
	case "assistant":
		p.assistant(ev.Message.Content)
	case "result":
		p.result(ev)
	}
}

func (p *liveParser) assistant(content json.RawMessage) {
	var blocks []block
	if json.Unmarshal(content, &blocks) != nil {
		var s string
		if json.Unmarshal(content, &s) == nil && strings.TrimSpace(s) != "" {
			p.text(s)
		}
		return
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			if strings.TrimSpace(bl.Text) != "" {
				p.text(bl.Text)
			}
		case "tool_use":
			p.emit(agent.LiveEvent{Kind: agent.LiveTool, Tool: bl.Name, Target: agent.ToolTarget(bl.Input, p.dir)})
		}
	}
}

func (p *liveParser) text(s string) {
	p.lastText = s
	p.emit(agent.LiveEvent{Kind: agent.LiveText, Text: s})
}

// result reports what went wrong, if anything: refused tools, and the error
// unless the agent already said it as text (usage-limit messages arrive
// both ways).
func (p *liveParser) result(ev event) {
	for _, d := range ev.PermissionDenials {
		msg := "permission denied: " + d.ToolName
		if t := agent.ToolTarget(d.ToolInput, p.dir); t != "" {
			msg += " " + t
		}
		p.emit(agent.LiveEvent{Kind: agent.LiveError, Text: msg})
	}
	if !ev.IsError {
		return
	}
	msg := ""
	if ev.Result != nil {
		msg = strings.TrimSpace(*ev.Result)
	}
	if msg == "" {
		var errs []string
		if json.Unmarshal(ev.Errors, &errs) == nil && len(errs) > 0 {
			msg = errs[0]
		}
	}
	if msg == "" {
		msg = "the agent reported an error (" + ev.Subtype + ")"
	}
	if msg == strings.TrimSpace(p.lastText) {
		return
	}
	p.emit(agent.LiveEvent{Kind: agent.LiveError, Text: msg})
}
