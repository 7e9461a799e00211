package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The OpenAI Responses API as Codex calls it: POST /v1/responses with
// "stream": true, answered as server-sent events. Text becomes a message
// output item, each ToolUse a function_call item whose call_id is the
// fake's own tool id (so the function_call_output that comes back names the
// step) and whose arguments are the ToolUse input; for a tool the client
// offered as free text (Codex's apply_patch) it is a custom_tool_call whose
// input is the "input" string of the ToolUse input.

// ToolSearch is Codex's tool_search: a ToolUse of that name, when the
// client offers it, becomes a tool_search_call item that the client runs
// itself (it finds the deferred tools, MCP servers' tools among them, that
// the next request then offers).
const ToolSearch = "tool_search"

// responsesRequest is the part of a Responses API body the fake reads.
type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"` // a string or a list of items
	Tools        []responsesTool `json:"tools"`
	Metadata     json.RawMessage `json:"metadata"`
}

// responsesTool is an offered tool; namespaces nest more tools.
type responsesTool struct {
	Type       string          `json:"type"` // function, custom (free text input), namespace, web_search, ...
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
	Tools      []responsesTool `json:"tools"`
}

// responsesItem is one input item; which fields are set depends on Type.
type responsesItem struct {
	Type      string          `json:"type"` // message when empty
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a string or parts
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // function_call: JSON text in a string; tool_search_call: an object
	Input     string          `json:"input"`     // custom_tool_call: free text
	Output    json.RawMessage `json:"output"`    // a string or parts
	Tools     []responsesTool `json:"tools"`     // additional_tools, tool_search_output
}

// functionArguments is a function call's arguments: JSON text in a string.
func (it responsesItem) functionArguments() string {
	var s string
	if json.Unmarshal(it.Arguments, &s) != nil {
		return string(it.Arguments)
	}
	return s
}

// responsesCall is a decoded Responses API request.
type responsesCall struct {
	mr     *MessagesRequest
	custom map[string]bool // tools that take free text instead of JSON
	search bool            // the client runs tool_search itself (Codex's deferred tools)
	// namespace is the namespace of each tool offered inside one: a call
	// to it names both.
	namespace map[string]string
}

// addTools lists the offered tools, namespaces flattened.
func (c *responsesCall) addTools(tools []responsesTool) {
	for _, t := range tools {
		switch {
		case t.Type == "namespace":
			c.addTools(t.Tools)
			continue
		case t.Type == "custom":
			c.custom[t.Name] = true
		case t.Type == "tool_search":
			c.search = true
		}
		name := t.Name
		if name == "" {
			name = t.Type // built-in tools such as web_search
		}
		c.mr.Tools = append(c.mr.Tools, Tool{Name: name, InputSchema: t.Parameters})
	}
}

// addFound lists the tools a tool search found: those in a namespace are
// called with its name.
func (c *responsesCall) addFound(tools []responsesTool) {
	c.addTools(tools)
	for _, ns := range tools {
		if ns.Type != "namespace" {
			continue
		}
		for _, t := range ns.Tools {
			if c.namespace == nil {
				c.namespace = map[string]string{}
			}
			c.namespace[t.Name] = ns.Name
		}
	}
}

// decodeResponses translates a Responses API body into the Messages form
// the script logic reads: messages keep their role (developer messages are
// ignored like system ones), function calls become tool_use blocks of an
// assistant message and their outputs tool_result blocks of a user message.
// Tools come from the tools list and, for models Codex knows, from an
// additional_tools input item.
func decodeResponses(body []byte) (responsesCall, error) {
	var rr responsesRequest
	if err := json.Unmarshal(body, &rr); err != nil {
		return responsesCall{}, err
	}
	mr := &MessagesRequest{Model: rr.Model, Stream: rr.Stream, Metadata: rr.Metadata}
	call := responsesCall{mr: mr, custom: map[string]bool{}}
	if rr.Instructions != "" {
		mr.System = Content{{Type: "text", Text: rr.Instructions}}
	}
	call.addTools(rr.Tools)
	var items []responsesItem
	if len(rr.Input) > 0 && rr.Input[0] == '"' {
		items = []responsesItem{{Type: "message", Role: "user", Content: rr.Input}}
	} else if len(rr.Input) > 0 {
		if err := json.Unmarshal(rr.Input, &items); err != nil {
			return responsesCall{}, fmt.Errorf("input: %w", err)
		}
	}
	// add appends a block to the conversation, merging it into the last
	// message when that has the same role, as one model turn's items do.
	add := func(role string, b Block) {
		if n := len(mr.Messages); n > 0 && mr.Messages[n-1].Role == role {
			mr.Messages[n-1].Content = append(mr.Messages[n-1].Content, b)
			return
		}
		mr.Messages = append(mr.Messages, Message{Role: role, Content: Content{b}})
	}
	for _, it := range items {
		switch it.Type {
		case "", "message":
			text, err := partsText(it.Content)
			if err != nil {
				return responsesCall{}, fmt.Errorf("message content: %w", err)
			}
			b := Block{Type: "text", Text: text}
			if it.Role == "assistant" {
				add("assistant", b) // one model turn, however many items
				continue
			}
			// Other roles start a new message even after the same role:
			// Codex sends its environment and the prompt as two user
			// messages, which the script logic joins into one prompt.
			mr.Messages = append(mr.Messages, Message{Role: it.Role, Content: Content{b}})
		case "additional_tools":
			call.addTools(it.Tools)
		case "function_call":
			add("assistant", Block{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: argumentsJSON(it.functionArguments())})
		case "tool_search_call":
			add("assistant", Block{Type: "tool_use", ID: it.CallID, Name: ToolSearch, Input: it.Arguments})
		case "tool_search_output":
			// The tools found are offered from now on; the result the script
			// sees is their names.
			found := &responsesCall{mr: &MessagesRequest{}, custom: map[string]bool{}}
			found.addTools(it.Tools)
			call.addFound(it.Tools)
			add("user", Block{Type: "tool_result", ToolUseID: it.CallID, Content: Content{{Type: "text", Text: strings.Join(found.mr.ToolNames(), " ")}}})
		case "custom_tool_call":
			in, _ := json.Marshal(map[string]string{"input": it.Input})
			add("assistant", Block{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: in})
		case "function_call_output", "custom_tool_call_output":
			text, err := partsText(it.Output)
			if err != nil {
				return responsesCall{}, fmt.Errorf("%s output: %w", it.Type, err)
			}
			add("user", Block{Type: "tool_result", ToolUseID: it.CallID, Content: Content{{Type: "text", Text: text}}})
		}
		// Reasoning and other items carry nothing the script logic reads.
	}
	return call, nil
}

// partsText reads content given as a string or as a list of parts
// (input_text, output_text, ...), joining the text of the parts.
func partsText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			buf.WriteByte('\n')
		}
		buf.WriteString(p.Text)
	}
	return buf.String(), nil
}

// argumentsJSON keeps function call arguments as JSON when they are, and as
// a JSON string when a client sent something else.
func argumentsJSON(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request, rec Request) {
	call, err := decodeResponses(rec.Body)
	out := responsesWire{custom: call.custom, search: call.search, namespace: call.namespace, now: s.now}
	if call.mr != nil {
		out.stream = call.mr.Stream
	}
	s.serveModel(w, r, rec, call.mr, err, out)
}

type responsesWire struct {
	stream    bool
	custom    map[string]bool
	search    bool
	namespace map[string]string
	now       func() time.Time
}

// responseObject is the response the stream's first and last events carry,
// and the whole reply without streaming.
func (rw responsesWire) responseObject(r reply, status string, output []map[string]any) map[string]any {
	input, cached, out := r.usage.tokens()
	obj := map[string]any{
		"id":                   "resp_" + strings.TrimPrefix(r.id, "msg_"),
		"object":               "response",
		"created_at":           rw.now().Unix(),
		"status":               status,
		"model":                r.model,
		"output":               output,
		"parallel_tool_calls":  true,
		"tool_choice":          "auto",
		"error":                nil,
		"incomplete_details":   nil,
		"previous_response_id": nil,
		"usage":                nil,
	}
	switch status {
	case "completed", "incomplete":
		obj["usage"] = map[string]any{
			"input_tokens":          input,
			"input_tokens_details":  map[string]any{"cached_tokens": cached},
			"output_tokens":         out,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens":          input + out,
		}
	}
	if status == "incomplete" {
		obj["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
	}
	return obj
}

// item is one output item of a reply, with the text its stream deltas
// carry.
type item struct {
	done  map[string]any // the finished item
	added map[string]any // the item as output_item.added announces it
	delta string         // event type of the deltas
	field string         // the done item's field the deltas build up
	text  string
}

// items turns reply blocks into output items: text into an assistant
// message, a tool use into a function_call, or a custom_tool_call when the
// client offered that tool as a free-text one (the ToolUse input's "input"
// string is then the text).
func (rw responsesWire) items(r reply) []item {
	out := make([]item, len(r.blocks))
	for i, b := range r.blocks {
		switch {
		case b.typ == "text":
			id := "msg_" + randomHex(12)
			out[i] = item{
				done: map[string]any{"id": id, "type": "message", "status": "completed", "role": "assistant",
					"content": []any{map[string]any{"type": "output_text", "text": b.text, "annotations": []any{}}}},
				added: map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}},
				delta: "response.output_text.delta", field: "text", text: b.text,
			}
		case b.name == ToolSearch && rw.search:
			id := "tsc_" + randomHex(12)
			done := map[string]any{"id": id, "type": "tool_search_call", "status": "completed", "call_id": b.id,
				"execution": "client", "arguments": json.RawMessage(b.input)}
			out[i] = item{done: done, added: with(done, "status", "in_progress")}
		case rw.custom[b.name]:
			var in struct {
				Input *string `json:"input"`
			}
			text := string(b.input)
			if json.Unmarshal(b.input, &in) == nil && in.Input != nil {
				text = *in.Input
			}
			id := "ctc_" + randomHex(12)
			out[i] = item{
				done:  map[string]any{"id": id, "type": "custom_tool_call", "status": "completed", "call_id": b.id, "name": b.name, "input": text},
				added: map[string]any{"id": id, "type": "custom_tool_call", "status": "in_progress", "call_id": b.id, "name": b.name, "input": ""},
				delta: "response.custom_tool_call_input.delta", field: "input", text: text,
			}
		default:
			id := "fc_" + randomHex(12)
			done := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": b.id, "name": b.name, "arguments": string(b.input)}
			if ns := rw.namespace[b.name]; ns != "" {
				done["namespace"] = ns
			}
			out[i] = item{
				done:  done,
				added: with(done, "status", "in_progress", "arguments", ""),
				delta: "response.function_call_arguments.delta", field: "arguments", text: string(b.input),
			}
		}
	}
	return out
}

func (rw responsesWire) reply(w http.ResponseWriter, r reply) {
	status := "completed"
	if r.stopReason == "max_tokens" {
		status = "incomplete"
	}
	items := rw.items(r)
	output := make([]map[string]any, len(items))
	for i, it := range items {
		output[i] = it.done
	}
	w.Header().Set("x-request-id", r.requestID)
	if !rw.stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rw.responseObject(r, status, output))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(data map[string]any) {
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data) // only maps of plain values
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"type": "response.created", "response": rw.responseObject(r, "in_progress", []map[string]any{})})
	send(map[string]any{"type": "response.in_progress", "response": rw.responseObject(r, "in_progress", []map[string]any{})})
	for i, it := range items {
		id := it.done["id"]
		send(map[string]any{"type": "response.output_item.added", "output_index": i, "item": it.added})
		// A message's text lives in a content part; the other items'
		// deltas name only the item.
		at := map[string]any{"item_id": id, "output_index": i}
		if it.field == "text" {
			at["content_index"] = 0
			send(with(at, "type", "response.content_part.added", "part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}}))
		}
		if it.delta != "" { // a tool search call has no deltas
			for _, c := range chunks(it.text, 32) {
				send(with(at, "type", it.delta, "delta", c))
			}
			send(with(at, "type", strings.TrimSuffix(it.delta, "delta")+"done", it.field, it.text))
		}
		if it.field == "text" {
			send(with(at, "type", "response.content_part.done", "part", map[string]any{"type": "output_text", "text": it.text, "annotations": []any{}}))
		}
		send(map[string]any{"type": "response.output_item.done", "output_index": i, "item": it.done})
	}
	final := "response.completed"
	if status == "incomplete" {
		final = "response.incomplete"
	}
	send(map[string]any{"type": final, "response": rw.responseObject(r, status, output)})
}

// with returns a copy of m with the key/value pairs kv added.
func with(m map[string]any, kv ...any) map[string]any {
	out := maps.Clone(m)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// error writes the OpenAI error body. A usage limit is the 429 a ChatGPT
// plan gets when its window is used up, which Codex turns into "You've hit
// your usage limit. … try again at <time>."
func (rw responsesWire) error(w http.ResponseWriter, e *ErrorReply, now time.Time) {
	body := map[string]any{
		"type":    e.Type,
		"message": e.Message,
		"param":   nil,
		"code":    nil,
	}
	if e.Type == "" {
		body["type"], body["code"] = openAIErrorType(e.Status)
	}
	if u := e.UsageLimit; u != nil {
		reset := u.resetAt(now)
		if e.Type == "" {
			body["type"], body["code"] = "usage_limit_reached", nil
		}
		body["plan_type"] = "plus"
		body["resets_at"] = reset
		body["resets_in_seconds"] = max(reset-now.Unix(), 0)
		if wait := reset - now.Unix(); wait > 0 {
			w.Header().Set("retry-after", strconv.FormatInt(wait, 10))
		}
	}
	if body["message"] == "" {
		body["message"] = openAIErrorMessage(body["type"].(string))
	}
	for k, v := range e.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-request-id", "req_"+randomHex(16))
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": body})
}

// openAIErrorType is the error type and code the OpenAI API uses for status.
func openAIErrorType(status int) (typ string, code any) {
	switch status {
	case 400:
		return "invalid_request_error", nil
	case 401:
		return "invalid_request_error", "invalid_api_key"
	case 403:
		return "permission_error", nil
	case 404:
		return "invalid_request_error", "model_not_found"
	case 429:
		return "requests", "rate_limit_exceeded"
	case 503, 529:
		return "server_error", "server_is_overloaded"
	default:
		return "server_error", nil
	}
}

func openAIErrorMessage(typ string) string {
	switch typ {
	case "usage_limit_reached":
		return "The usage limit has been reached"
	case "requests":
		return "Rate limit reached. Please try again later."
	case "server_error":
		return "The server had an error while processing your request."
	default:
		return defaultErrorMessage(typ)
	}
}
