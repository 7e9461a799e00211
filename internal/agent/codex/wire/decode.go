package wire

import (
	"fmt"
	"path"

	"ralph/internal/activity"
	"ralph/internal/jsonscan"
	"ralph/internal/shellwords"
)

// Decoder turns Codex's events, line by line, into activity events.
type Decoder struct {
	s     *activity.Sink
	shown map[string]bool // items whose call is already shown
}

// NewDecoder returns a decoder that sends its events to s.
func NewDecoder(s *activity.Sink) *Decoder { return &Decoder{s: s, shown: map[string]bool{}} }

// Line decodes one line of output. A line of text is shown as it is; a
// line cut short is dropped.
func (d *Decoder) Line(line []byte) {
	b, ok := d.s.Object(line)
	if !ok {
		return
	}
	var m members
	if !m.parse(b) {
		return
	}
	switch string(m.Type) {
	case "item.started":
		if hasItem(m.item) {
			var it itemMembers
			it.parse(m.item)
			d.call(&it)
		}
	case "item.completed":
		if hasItem(m.item) {
			var it itemMembers
			it.parse(m.item)
			d.item(&it)
		}
	case "error":
		if msg, ok := jsonscan.StringValue(m.Error.Message); ok {
			d.s.Error(msg)
		}
	case "turn.failed":
		d.s.Error(m.Error.RawMessage())
		d.s.Summary("turn failed")
	case "turn.completed":
		var u activity.Usage
		activity.ScanUsage(m.Usage, &u)
		d.s.Summary("turn completed", activity.Tokens(u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, 0))
	}
}

// hasItem reports whether an event has an item, not null.
func hasItem(raw []byte) bool { return len(raw) > 0 && string(raw) != "null" }

// Flush implements activity.Decoder; nothing is held back.
func (d *Decoder) Flush() {}

func (d *Decoder) item(it *itemMembers) {
	defer delete(d.shown, it.id)
	switch it.typ {
	case "agent_message":
		d.s.Text(it.text)
	case "error":
		d.s.Error(it.message)
	case "command_execution":
		d.call(it)
		failure := ""
		if it.hasExit && it.exitCode != 0 {
			failure = fmt.Sprintf("exit %d", int(it.exitCode))
		}
		d.s.Result(string(it.output), failure)
	case "file_change":
		jsonscan.EachObject(it.changes, func(s *jsonscan.Scanner) {
			var p, kind string
			_ = s.Object(func(k []byte) error {
				switch string(k) {
				case "path":
					p, _ = s.String()
				case "kind":
					kind, _ = s.String()
				}
				return nil
			})
			verb := map[string]string{"add": "Write", "delete": "Delete"}[kind]
			if verb == "" {
				verb = "Edit"
			}
			d.s.Tool(verb, activity.ShortTarget(activity.RelPath(p, d.s.Dir)))
		})
	case "mcp_tool_call", "web_search":
		d.call(it)
	}
}

// call shows a tool call once: when it starts, so a followed log shows
// what runs now, or when it completes if its start was not seen.
func (d *Decoder) call(it *itemMembers) {
	var tool, target string
	switch it.typ {
	case "command_execution":
		tool, target = "Shell", activity.ShortTarget(unwrapShell(it.command))
	case "mcp_tool_call":
		tool = it.server + "." + it.tool
	case "web_search":
		tool, target = "WebSearch", activity.ShortTarget(it.query)
	default:
		return
	}
	if it.id != "" {
		if d.shown[it.id] {
			return
		}
		d.shown[it.id] = true
	}
	d.s.Tool(tool, target)
}

// unwrapShell shows the command Codex ran, not its wrapper: Codex reports
// every command as `bash -lc '<command>'`, or double-quoted when the
// command holds a single quote. Splitting like a shell undoes either
// quoting.
func unwrapShell(cmd string) string {
	w, err := shellwords.Split(cmd)
	if err != nil || len(w) != 3 || (w[1] != "-c" && w[1] != "-lc") {
		return cmd
	}
	switch path.Base(w[0]) {
	case "sh", "bash", "zsh":
		return w[2]
	}
	return cmd
}
