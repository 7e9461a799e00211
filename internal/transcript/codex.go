package transcript

import (
	"encoding/json"
	"fmt"
	"path"

	"ralph/internal/agent"
	"ralph/internal/shellwords"
)

type codexEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Error   struct {
		Message string `json:"message"`
	} `json:"error"`
	Item  *codexItem `json:"item"`
	Usage *struct {
		Input  int64 `json:"input_tokens"`
		Cached int64 `json:"cached_input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"usage"`
}

type codexItem struct {
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

// codex renders one event of `codex exec --json`.
func (r *Renderer) codex(line []byte) {
	var ev codexEvent
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	switch ev.Type {
	case "item.started":
		if ev.Item != nil {
			r.codexCall(ev.Item)
		}
	case "item.completed":
		if ev.Item != nil {
			r.codexItem(ev.Item)
		}
	case "error":
		r.errorOnce(ev.Message)
	case "turn.failed":
		r.errorOnce(ev.Error.Message)
		r.summary("turn failed")
	case "turn.completed":
		if u := ev.Usage; u != nil {
			r.summary("turn completed", tokens(u.Input, u.Output, u.Cached, 0))
		} else {
			r.summary("turn completed")
		}
	}
}

func (r *Renderer) codexItem(it *codexItem) {
	defer delete(r.shown, it.ID)
	switch it.Type {
	case "agent_message":
		r.text(it.Text)
	case "error":
		r.errorOnce(it.Message)
	case "command_execution":
		r.codexCall(it)
		failure := ""
		if it.ExitCode != nil && *it.ExitCode != 0 {
			failure = fmt.Sprintf("exit %d", *it.ExitCode)
		}
		r.toolResult(it.Output, failure)
	case "file_change":
		for _, c := range it.Changes {
			verb := map[string]string{"add": "Write", "delete": "Delete"}[c.Kind]
			if verb == "" {
				verb = "Edit"
			}
			r.send(agent.LiveEvent{Kind: agent.LiveTool, Tool: verb, Target: r.target(verb, map[string]string{"file_path": c.Path})})
		}
	case "mcp_tool_call", "web_search":
		r.codexCall(it)
	}
}

// codexCall shows a tool call once: when it starts, so a followed log shows
// what runs now, or when it completes if its start was not seen.
func (r *Renderer) codexCall(it *codexItem) {
	var e agent.LiveEvent
	switch it.Type {
	case "command_execution":
		e = agent.LiveEvent{Kind: agent.LiveTool, Tool: "Shell", Target: agent.ShortTarget(unwrapShell(it.Command))}
	case "mcp_tool_call":
		e = agent.LiveEvent{Kind: agent.LiveTool, Tool: it.Server + "." + it.Tool}
	case "web_search":
		e = agent.LiveEvent{Kind: agent.LiveTool, Tool: "WebSearch", Target: agent.ShortTarget(it.Query)}
	default:
		return
	}
	if it.ID != "" {
		if r.shown[it.ID] {
			return
		}
		r.shown[it.ID] = true
	}
	r.send(e)
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
