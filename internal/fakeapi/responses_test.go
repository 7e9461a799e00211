package fakeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// responsesBody is a request shaped like Codex's: developer instructions,
// the environment and the prompt as two user messages, function tools.
func responsesBody(stream bool, extra ...msg) msg {
	input := []msg{
		{"type": "message", "role": "developer", "content": []msg{{"type": "input_text", "text": "You are Codex."}}},
		{"type": "message", "role": "user", "content": []msg{{"type": "input_text", "text": "<environment_context/>"}}},
		{"type": "message", "role": "user", "content": []msg{{"type": "input_text", "text": "create hello.txt"}}},
	}
	return msg{
		"model":  "fake-model",
		"stream": stream,
		"input":  append(input, extra...),
		"tools": []msg{
			{"type": "function", "name": "exec_command", "parameters": msg{"type": "object"}},
			{"type": "namespace", "name": "multi_agent_v1", "tools": []msg{{"type": "function", "name": "spawn_agent"}}},
			{"type": "web_search"},
		},
	}
}

func TestResponsesStream(t *testing.T) {
	text := "Let me create it ✓, with a text long enough to be split."
	s := Start(t, Script{Iterations: []Iteration{{Turns: []Turn{{
		Text:     text,
		ToolUses: []ToolUse{{Name: "exec_command", Input: json.RawMessage(`{"cmd": "printf 'hello\\n' > hello.txt"}`)}},
		Usage:    &Usage{InputTokens: 100, CacheReadInputTokens: 900, OutputTokens: 42},
	}}}}})
	resp, body := post(t, s.URL, "/v1/responses", responsesBody(true))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	events := readSSE(t, body)
	var names []string
	for i, e := range events {
		if got := num(t, e.data, "sequence_number"); got != i {
			t.Errorf("event %d has sequence_number %d", i, got)
		}
		if len(names) == 0 || names[len(names)-1] != e.name || !strings.HasSuffix(e.name, ".delta") {
			names = append(names, e.name)
		}
	}
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done",
		"response.completed"}
	if !slices.Equal(names, want) {
		t.Fatalf("events\n got %v\nwant %v", names, want)
	}

	var gotText, gotArgs string
	var call map[string]any
	for _, e := range events {
		switch e.name {
		case "response.output_item.done":
			call = e.data["item"].(map[string]any)
		case "response.output_text.delta":
			gotText += e.data["delta"].(string)
		case "response.function_call_arguments.delta":
			gotArgs += e.data["delta"].(string)
		}
	}
	if gotText != text || gotArgs != `{"cmd":"printf 'hello\\n' > hello.txt"}` {
		t.Errorf("streamed text %q, arguments %s", gotText, gotArgs)
	}
	if call["type"] != "function_call" || call["name"] != "exec_command" || call["arguments"] != gotArgs || !ownID.MatchString(call["call_id"].(string)) {
		t.Errorf("function call item = %v", call)
	}
	done := events[len(events)-1].data["response"].(map[string]any)
	if done["status"] != "completed" || done["model"] != "fake-model" || len(done["output"].([]any)) != 2 {
		t.Errorf("completed response = %v", done)
	}
	// Cached input counts as input in the OpenAI convention.
	if in, cached, out := num(t, done, "usage", "input_tokens"), num(t, done, "usage", "input_tokens_details", "cached_tokens"),
		num(t, done, "usage", "output_tokens"); in != 1000 || cached != 900 || out != 42 {
		t.Errorf("usage in=%d cached=%d out=%d, want 1000, 900, 42", in, cached, out)
	}

	reqs := s.RequestsTo("/v1/responses")
	if len(reqs) != 1 || reqs[0].Messages == nil {
		t.Fatalf("requests = %+v", reqs)
	}
	mr := reqs[0].Messages
	if p := mr.Prompts(); len(p) != 1 || p[0] != "<environment_context/>\ncreate hello.txt" {
		t.Errorf("prompts = %q", p)
	}
	if names := mr.ToolNames(); !slices.Equal(names, []string{"exec_command", "spawn_agent", "web_search"}) {
		t.Errorf("tools = %v", names)
	}
	if len(s.MessageRequests()) != 1 {
		t.Error("a decoded Responses request is not among the model calls")
	}
}

func TestResponsesToolResultContinuesTheIteration(t *testing.T) {
	s := Start(t, Script{Iterations: []Iteration{
		{Turns: []Turn{
			ToolTurn("", "exec_command", map[string]string{"cmd": "ls"}),
			TextTurn("saw {{tool_result}} for {{prompt}}"),
		}},
		{Turns: []Turn{TextTurn("second")}},
	}})
	_, raw := post(t, s.URL, "/v1/responses", responsesBody(false))
	var first struct {
		Output []map[string]any `json:"output"`
	}
	if err := json.Unmarshal(raw, &first); err != nil || len(first.Output) != 1 || first.Output[0]["type"] != "function_call" {
		t.Fatalf("first reply %s (%v)", raw, err)
	}
	call := first.Output[0]
	callID := call["call_id"].(string)

	_, raw = post(t, s.URL, "/v1/responses", responsesBody(false,
		msg{"type": "reasoning", "summary": []msg{}},
		msg{"type": "function_call", "call_id": callID, "name": "exec_command", "arguments": `{"cmd":"ls"}`},
		msg{"type": "function_call_output", "call_id": callID, "output": "a.txt\nb.txt"},
	))
	var second struct {
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct{ Type, Text string }
		} `json:"output"`
	}
	if err := json.Unmarshal(raw, &second); err != nil || len(second.Output) != 1 {
		t.Fatalf("second reply %s (%v)", raw, err)
	}
	o := second.Output[0]
	want := "saw a.txt\nb.txt for <environment_context/>\ncreate hello.txt"
	if second.Status != "completed" || o.Type != "message" || o.Role != "assistant" || o.Content[0].Type != "output_text" || o.Content[0].Text != want {
		t.Errorf("second reply = %s", raw)
	}
	reqs := s.RequestsTo("/v1/responses")
	if r := reqs[1]; r.Iteration != 0 || r.Turn != 1 || r.Messages.CountRole("assistant") != 1 {
		t.Errorf("continuation answered as iteration %d turn %d with %d assistant messages", r.Iteration, r.Turn, r.Messages.CountRole("assistant"))
	}
	// A new session is the next iteration.
	_, raw = post(t, s.URL, "/v1/responses", msg{"model": "m", "input": "hello"})
	if !strings.Contains(string(raw), `"text":"second"`) {
		t.Errorf("new session reply = %s", raw)
	}
}

func TestResponsesCustomTool(t *testing.T) {
	// Models Codex knows get their tools in an additional_tools item, some
	// of them free-text ("custom") tools.
	s := Start(t, Script{Iterations: []Iteration{{Turns: []Turn{
		ToolTurn("", "exec", map[string]string{"input": "text('hi')"}),
	}}}})
	body := msg{"model": "gpt-5.5", "stream": true, "input": []msg{
		{"type": "additional_tools", "role": "developer", "tools": []msg{
			{"type": "namespace", "name": "functions", "tools": []msg{{"type": "custom", "name": "exec"}, {"type": "function", "name": "wait"}}},
		}},
		{"type": "message", "role": "user", "content": "go"},
	}}
	_, raw := post(t, s.URL, "/v1/responses", body)
	var input string
	var item map[string]any
	for _, e := range readSSE(t, raw) {
		switch e.name {
		case "response.custom_tool_call_input.delta":
			input += e.data["delta"].(string)
		case "response.output_item.done":
			item = e.data["item"].(map[string]any)
		}
	}
	if input != "text('hi')" || item["type"] != "custom_tool_call" || item["input"] != input || item["name"] != "exec" {
		t.Errorf("input %q, item %v", input, item)
	}
	if names := s.RequestsTo("/v1/")[0].Messages.ToolNames(); !slices.Equal(names, []string{"exec", "wait"}) {
		t.Errorf("tools = %v", names)
	}
}

func TestResponsesErrors(t *testing.T) {
	now := time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)
	reset := time.Date(2026, 11, 21, 1, 5, 0, 0, time.UTC)
	tests := []struct {
		name       string
		turn       Turn
		body       string // raw; default a Codex-like request
		wantStatus int
		want       map[string]any // fields of the error object
		wantRetry  string
	}{
		{
			name: "usage limit", turn: UsageLimitTurn("five_hour", reset), wantStatus: 429,
			want: map[string]any{"type": "usage_limit_reached", "resets_at": float64(reset.Unix()),
				"resets_in_seconds": float64(7500), "plan_type": "plus", "message": "The usage limit has been reached"},
			wantRetry: "7500",
		},
		{
			name: "usage limit relative", turn: Turn{Error: &ErrorReply{Status: 429, UsageLimit: &UsageLimit{Claim: "five_hour", ResetsIn: Duration(time.Hour)}}},
			wantStatus: 429, want: map[string]any{"resets_at": float64(now.Add(time.Hour).Unix()), "resets_in_seconds": float64(3600)},
		},
		{
			name: "rate limit", turn: ErrorTurn(429, ""), wantStatus: 429,
			want: map[string]any{"type": "requests", "code": "rate_limit_exceeded"},
		},
		{
			name: "explicit type", turn: Turn{Error: &ErrorReply{Status: 400, Type: "invalid_request_error", Message: "context_length_exceeded"}},
			wantStatus: 400, want: map[string]any{"type": "invalid_request_error", "message": "context_length_exceeded"},
		},
		{name: "overloaded", turn: ErrorTurn(529, ""), wantStatus: 529, want: map[string]any{"type": "server_error"}},
		{name: "undecodable", turn: TextTurn("x"), body: "{", wantStatus: 400, want: map[string]any{"type": "invalid_request_error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Script{Iterations: []Iteration{{Turns: []Turn{tt.turn}}}}, WithClock(func() time.Time { return now }))
			req := tt.body
			if req == "" {
				b, _ := json.Marshal(responsesBody(true))
				req = string(b)
			}
			resp, raw := postString(t, s.URL+"/v1/responses", req)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
			var body struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if body.Error[k] != v {
					t.Errorf("error.%s = %v, want %v (%s)", k, body.Error[k], v, raw)
				}
			}
			if got := resp.Header.Get("retry-after"); tt.wantRetry != "" && got != tt.wantRetry {
				t.Errorf("retry-after = %q, want %q", got, tt.wantRetry)
			}
		})
	}
}

func TestResponsesProblems(t *testing.T) {
	s := Start(t, Script{})
	resp, raw := postString(t, s.URL+"/v1/responses", `{"input":"hi"}`)
	if resp.StatusCode != 500 || !strings.Contains(string(raw), `"type":"server_error"`) || !strings.Contains(string(raw), "script has no reply") {
		t.Errorf("exhausted script: %d %s", resp.StatusCode, raw)
	}
	resp, raw = postString(t, s.URL+"/v1/responses", `{"input":[{"type":"message","content":7}]}`)
	if resp.StatusCode != 400 || !strings.Contains(string(raw), "undecodable") {
		t.Errorf("bad content: %d %s", resp.StatusCode, raw)
	}
	if p := s.Problems(); len(p) != 2 {
		t.Errorf("problems = %q", p)
	}
	if n := len(s.RequestsTo("/v1/responses")); n != 2 {
		t.Errorf("recorded %d requests, want 2", n)
	}
}

// postString sends body as is and returns the response with its body read.
func postString(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

func TestResponsesToolSearch(t *testing.T) {
	// Codex defers MCP servers' tools: the model finds them with
	// tool_search, which Codex runs itself, and then calls one in its
	// namespace.
	s := Start(t, Script{Iterations: []Iteration{{Turns: []Turn{
		ToolTurn("", ToolSearch, map[string]string{"query": "ask"}),
		ToolTurn("", "ask", map[string]string{"question": "?"}),
		TextTurn("{{tool_result}}"),
	}}}})
	doneItem := func(raw []byte) map[string]any {
		for _, e := range readSSE(t, raw) {
			if e.name == "response.output_item.done" {
				return e.data["item"].(map[string]any)
			}
		}
		t.Fatalf("no item in %s", raw)
		return nil
	}
	offered := []msg{{"type": "function", "name": "exec_command"}, {"type": "tool_search", "execution": "client"}}
	prompt := msg{"type": "message", "role": "user", "content": "go"}
	_, raw := post(t, s.URL, "/v1/responses", msg{"model": "gpt-5.5", "stream": true, "tools": offered, "input": []msg{prompt}})
	search := doneItem(raw)
	if search["type"] != "tool_search_call" || search["execution"] != "client" || search["arguments"].(map[string]any)["query"] != "ask" {
		t.Fatalf("search item %v", search)
	}
	found := msg{"type": "tool_search_output", "call_id": search["call_id"], "execution": "client", "tools": []msg{
		{"type": "namespace", "name": "mcp__ralph", "tools": []msg{{"type": "function", "name": "ask"}}},
	}}
	_, raw = post(t, s.URL, "/v1/responses", msg{"model": "gpt-5.5", "stream": true, "tools": offered,
		"input": []msg{prompt, search, found}})
	call := doneItem(raw)
	if call["type"] != "function_call" || call["name"] != "ask" || call["namespace"] != "mcp__ralph" {
		t.Fatalf("call item %v", call)
	}
	req := s.RequestsTo("/v1/")[1].Messages
	if !slices.Contains(req.ToolNames(), "ask") || req.LastToolResult() != "ask" {
		t.Errorf("tools %v, search result %q", req.ToolNames(), req.LastToolResult())
	}
}
