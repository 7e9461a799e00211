package transcript

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"ralph/internal/agent"
)

type geminiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type geminiEvent struct {
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Message    string          `json:"message"`
	Error      *geminiError    `json:"error"`
	Stats      *struct {
		Input      int64 `json:"input_tokens"`
		Output     int64 `json:"output_tokens"`
		Cached     int64 `json:"cached"`
		DurationMS int64 `json:"duration_ms"`
		ToolCalls  int   `json:"tool_calls"`
	} `json:"stats"`
}

// gemini renders one event of Gemini CLI's stream-json.
func (r *Renderer) gemini(line []byte) {
	var ev geminiEvent
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	if ev.Type == "message" {
		// The prompt comes back as a user message; the answer comes in
		// deltas, shown as one text. A whole message stands alone.
		switch {
		case ev.Role != "assistant" && ev.Role != "model":
		case ev.Delta:
			r.pending.WriteString(ev.Content)
		default:
			r.flushText()
			r.text(ev.Content)
		}
		return
	}
	r.flushText()
	switch ev.Type {
	case "tool_use":
		r.send(agent.LiveEvent{Kind: agent.LiveTool, Tool: ev.ToolName, Target: r.target(ev.ToolName, ev.Parameters)})
	case "tool_result":
		out, failure := ev.Output, ""
		if ev.Status == "error" {
			failure = "error"
			if out == "" && ev.Error != nil {
				out = ev.Error.Message
			}
		}
		r.toolResult(out, failure)
	case "error":
		r.errorOnce(ev.Message)
	case "result":
		if ev.Error != nil {
			r.errorOnce(ev.Error.Message)
		}
		status := "result: " + ev.Status
		if s := ev.Stats; s != nil {
			r.summary(status, count(s.ToolCalls, "tool call"), duration(s.DurationMS), tokens(s.Input, s.Output, s.Cached, 0))
		} else {
			r.summary(status)
		}
	}
}

// flushText shows the Gemini text gathered so far.
func (r *Renderer) flushText() {
	if r.pending.Len() > 0 {
		r.text(r.pending.String())
		r.pending.Reset()
	}
}

// geminiDocument renders Gemini CLI's json output: the answer, an error,
// and the totals of its stats (it names no individual tool calls).
func (r *Renderer) geminiDocument(b []byte) {
	var doc struct {
		Response *string      `json:"response"`
		Error    *geminiError `json:"error"`
		Stats    struct {
			Models map[string]struct {
				Tokens struct {
					Input      int64 `json:"input"`
					Prompt     int64 `json:"prompt"`
					Candidates int64 `json:"candidates"`
					Cached     int64 `json:"cached"`
				} `json:"tokens"`
			} `json:"models"`
			Tools struct {
				TotalCalls int `json:"totalCalls"`
				ByName     map[string]struct {
					Count int `json:"count"`
				} `json:"byName"`
			} `json:"tools"`
		} `json:"stats"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return
	}
	if doc.Response != nil {
		r.text(*doc.Response)
	}
	if doc.Error != nil {
		r.errorOnce(doc.Error.Message)
	}
	var in, out, cached int64
	for _, m := range doc.Stats.Models {
		in += max(m.Tokens.Input, m.Tokens.Prompt)
		out += m.Tokens.Candidates
		cached += m.Tokens.Cached
	}
	tools := count(doc.Stats.Tools.TotalCalls, "tool call")
	if names := slices.Sorted(maps.Keys(doc.Stats.Tools.ByName)); tools != "" && len(names) > 0 {
		var each []string
		for _, n := range names {
			each = append(each, fmt.Sprintf("%s %d", n, doc.Stats.Tools.ByName[n].Count))
		}
		tools += " (" + strings.Join(each, ", ") + ")"
	}
	status := "result"
	if doc.Error != nil {
		status = "result: error"
	}
	r.summary(status, tools, tokens(in, out, cached, 0))
}
