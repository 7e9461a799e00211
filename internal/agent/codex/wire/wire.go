// Package wire owns the output format of `codex exec --json`, in one
// place: Decoder decodes each event into activity events, which the live
// view, `ralph logs` and the dashboard show, and Scanner reads the same
// events for the facts the analyzer judges (thread, messages, commands and
// their failures, file changes, usage, failed turns), with a streaming scan
// that skips what no fact comes from.
package wire

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"ralph/internal/activity"
	"ralph/internal/shellwords"
)

// Is reports whether an event of type typ belongs to `codex exec --json`:
// its thread, turn and item events. (Its "error" event is Gemini CLI's
// name too.)
func Is(typ string) bool {
	return strings.HasPrefix(typ, "thread.") || strings.HasPrefix(typ, "turn.") || strings.HasPrefix(typ, "item.")
}

type event struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Error   struct {
		Message string `json:"message"`
	} `json:"error"`
	Item  *item `json:"item"`
	Usage *struct {
		Input  int64 `json:"input_tokens"`
		Cached int64 `json:"cached_input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"usage"`
}

type item struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Message  string `json:"message"`
	Command  string `json:"command"`
	Output   string `json:"aggregated_output"`
	ExitCode *int   `json:"exit_code"`
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Query  string `json:"query"`
}

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
	var ev event
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	switch ev.Type {
	case "item.started":
		if ev.Item != nil {
			d.call(ev.Item)
		}
	case "item.completed":
		if ev.Item != nil {
			d.item(ev.Item)
		}
	case "error":
		d.s.Error(ev.Message)
	case "turn.failed":
		d.s.Error(ev.Error.Message)
		d.s.Summary("turn failed")
	case "turn.completed":
		if u := ev.Usage; u != nil {
			d.s.Summary("turn completed", activity.Tokens(u.Input, u.Output, u.Cached, 0))
		} else {
			d.s.Summary("turn completed")
		}
	}
}

// Flush implements activity.Decoder; nothing is held back.
func (d *Decoder) Flush() {}

func (d *Decoder) item(it *item) {
	defer delete(d.shown, it.ID)
	switch it.Type {
	case "agent_message":
		d.s.Text(it.Text)
	case "error":
		d.s.Error(it.Message)
	case "command_execution":
		d.call(it)
		failure := ""
		if it.ExitCode != nil && *it.ExitCode != 0 {
			failure = fmt.Sprintf("exit %d", *it.ExitCode)
		}
		d.s.Result(it.Output, failure)
	case "file_change":
		for _, c := range it.Changes {
			verb := map[string]string{"add": "Write", "delete": "Delete"}[c.Kind]
			if verb == "" {
				verb = "Edit"
			}
			d.s.Tool(verb, activity.ShortTarget(activity.RelPath(c.Path, d.s.Dir)))
		}
	case "mcp_tool_call", "web_search":
		d.call(it)
	}
}

// call shows a tool call once: when it starts, so a followed log shows
// what runs now, or when it completes if its start was not seen.
func (d *Decoder) call(it *item) {
	var tool, target string
	switch it.Type {
	case "command_execution":
		tool, target = "Shell", activity.ShortTarget(unwrapShell(it.Command))
	case "mcp_tool_call":
		tool = it.Server + "." + it.Tool
	case "web_search":
		tool, target = "WebSearch", activity.ShortTarget(it.Query)
	default:
		return
	}
	if it.ID != "" {
		if d.shown[it.ID] {
			return
		}
		d.shown[it.ID] = true
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
