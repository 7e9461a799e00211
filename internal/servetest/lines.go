package servetest

import (
	"encoding/json"
	"fmt"
)

// What the scripted agent prints (script.Iteration's StdoutLines) and the
// files it leaves, as Claude Code in stream-json mode would: built here so
// that every test speaks the format the daemon reads the same way.

// Line is v as one stream-json line.
func Line(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// AssistantText is an assistant message of text.
func AssistantText(text string) json.RawMessage {
	return Line(map[string]any{"type": "assistant", "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}})
}

// AssistantTool is an assistant message that calls the tool name.
func AssistantTool(name string, input map[string]any) json.RawMessage {
	return Line(map[string]any{"type": "assistant", "message": map[string]any{"content": []any{
		map[string]any{"type": "tool_use", "id": "tu-" + name, "name": name, "input": input}}}})
}

// Result is the line that ends a successful agent call: its agent
// session, its final text (where the status block is) and, if set, what
// it cost.
type Result struct {
	Session      string
	Text         string
	CostUSD      float64
	InputTokens  int
	OutputTokens int
}

// Line is the result as a stream-json line.
func (r Result) Line() json.RawMessage {
	type usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	}
	v := struct {
		Type      string  `json:"type"`
		Subtype   string  `json:"subtype"`
		IsError   bool    `json:"is_error"`
		SessionID string  `json:"session_id"`
		Result    string  `json:"result"`
		Cost      float64 `json:"total_cost_usd,omitempty"`
		Usage     *usage  `json:"usage,omitempty"`
	}{Type: "result", Subtype: "success", SessionID: r.Session, Result: r.Text, Cost: r.CostUSD}
	if r.InputTokens != 0 || r.OutputTokens != 0 {
		v.Usage = &usage{r.InputTokens, r.OutputTokens}
	}
	return Line(v)
}

// ResultLine is the Result line of session with text and no cost.
func ResultLine(session, text string) json.RawMessage {
	return Result{Session: session, Text: text}.Line()
}

// RalphStatus is the RALPH_STATUS block an agent ends its text with,
// after a change to one file.
func RalphStatus(status string, exit bool, remaining int) string {
	return fmt.Sprintf("\n---RALPH_STATUS---\nSTATUS: %s\nEXIT_SIGNAL: %v\nWORK_TYPE: IMPLEMENTATION\nFILES_MODIFIED: 1\nTASKS_REMAINING: %d\n---END_RALPH_STATUS---", status, exit, remaining)
}

// CompleteStatus is the shortest RALPH_STATUS block of an agent that is
// done.
const CompleteStatus = "\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nTASKS_REMAINING: 0\n---END_RALPH_STATUS---"

// Question is the CLARITY_STATUS block of an agent that cannot go on
// without an answer to question.
func Question(question string) string {
	return "\n---CLARITY_STATUS---\nSTATUS: NEEDS_CLARIFICATION\nCLARIFICATION_QUESTIONS: " + question + "\n---END_CLARITY_STATUS---"
}

// ClarityStatus is the whole CLARITY_STATUS block a request's agent ends
// its text with.
func ClarityStatus(status string, exit, prReady, needs bool, questions, summary string) string {
	return fmt.Sprintf("\n---CLARITY_STATUS---\nSTATUS: %s\nEXIT_SIGNAL: %v\nFILES_MODIFIED: 1\nPR_READY: %v\n"+
		"CLARIFICATION_NEEDED: %v\nCLARIFICATION_QUESTIONS: %s\nWORK_SUMMARY: %s\nRECOMMENDATION: review\n---END_CLARITY_STATUS---",
		status, exit, prReady, needs, questions, summary)
}

// TaskFile is a fleet task file as the agent leaves it: the checklist it
// made of the task, ticked as far as done.
func TaskFile(title, session string, done ...bool) string {
	s := fmt.Sprintf("# Task: %s\n\n**Session:** %s\n**Status:** IN_PROGRESS\n\n## Checklist\n\n", title, session)
	for i, d := range done {
		box := " "
		if d {
			box = "x"
		}
		s += fmt.Sprintf("- [%s] step %d\n", box, i+1)
	}
	return s + "\n## RALPH_STATUS\n"
}
