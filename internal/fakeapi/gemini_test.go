package fakeapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// geminiBody is a request shaped like Gemini CLI's: the session context
// and the prompt as two user contents, function declarations.
func geminiBody(extra ...msg) msg {
	return msg{
		"contents": append([]msg{
			{"role": "user", "parts": []msg{{"text": "<session_context/>"}}},
			{"role": "user", "parts": []msg{{"text": "create hello.txt"}}},
		}, extra...),
		"systemInstruction": msg{"role": "user", "parts": []msg{{"text": "You are Gemini CLI."}}},
		"tools": []msg{{"functionDeclarations": []msg{
			{"name": "write_file", "parametersJsonSchema": msg{"type": "object"}},
			{"name": "run_shell_command", "parameters": msg{"type": "object"}},
		}}},
		"generationConfig": msg{"temperature": 1},
	}
}

const geminiStream = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"

// readGeminiSSE parses Gemini's event stream: "data: <json>" lines each
// followed by a blank line, CRLF-terminated, no event names.
func readGeminiSSE(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\r\n\r\n")) {
		t.Fatalf("stream does not end with CRLF CRLF: %q", body)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			continue
		}
		raw, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("want a data line, got %q", line)
		}
		var chunk map[string]any
		if err := json.Unmarshal([]byte(raw), &chunk); err != nil {
			t.Fatal(err)
		}
		out = append(out, chunk)
	}
	return out
}

// candidate returns the parts and finish reason of a chunk's candidate.
func candidate(t *testing.T, chunk map[string]any) ([]any, any) {
	t.Helper()
	cands, _ := chunk["candidates"].([]any)
	if len(cands) != 1 {
		t.Fatalf("chunk has %d candidates: %v", len(cands), chunk)
	}
	c := cands[0].(map[string]any)
	content := c["content"].(map[string]any)
	if content["role"] != "model" {
		t.Errorf("content role %v", content["role"])
	}
	return content["parts"].([]any), c["finishReason"]
}

func TestGeminiStream(t *testing.T) {
	text := "I'll write the file ✓, with a text long enough to be split."
	s := Start(t, Script{Iterations: []Iteration{{Turns: []Turn{{
		Text: text,
		ToolUses: []ToolUse{
			{Name: "write_file", Input: json.RawMessage(`{"file_path": "hello.txt", "content": "hello\n"}`)},
			{Name: "run_shell_command", Input: json.RawMessage(`{"command": "cat hello.txt"}`)},
		},
		Usage: &Usage{InputTokens: 100, CacheReadInputTokens: 50, OutputTokens: 7},
	}}}}})
	resp, body := post(t, s.URL, geminiStream, geminiBody())
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	chunks := readGeminiSSE(t, body)
	var gotText string
	var calls []map[string]any
	for i, c := range chunks {
		parts, finish := candidate(t, c)
		last := i == len(chunks)-1
		if (finish != nil) != last || (c["usageMetadata"] != nil) != last {
			t.Errorf("chunk %d: finishReason %v usage %v", i, finish, c["usageMetadata"])
		}
		if c["modelVersion"] != "gemini-test" {
			t.Errorf("modelVersion %v", c["modelVersion"])
		}
		for _, p := range parts {
			p := p.(map[string]any)
			if txt, ok := p["text"].(string); ok {
				gotText += txt
			}
			if fc, ok := p["functionCall"].(map[string]any); ok {
				calls = append(calls, fc)
			}
		}
	}
	if gotText != text || len(calls) != 2 {
		t.Fatalf("text %q, calls %v", gotText, calls)
	}
	if calls[0]["name"] != "write_file" || calls[0]["args"].(map[string]any)["content"] != "hello\n" || !ownID.MatchString(calls[0]["id"].(string)) {
		t.Errorf("first call %v", calls[0])
	}
	last := chunks[len(chunks)-1]
	if _, finish := candidate(t, last); finish != "STOP" {
		t.Errorf("finishReason %v", finish)
	}
	if in, out, cached := num(t, last, "usageMetadata", "promptTokenCount"), num(t, last, "usageMetadata", "candidatesTokenCount"),
		num(t, last, "usageMetadata", "cachedContentTokenCount"); in != 150 || out != 7 || cached != 50 {
		t.Errorf("usage prompt=%d candidates=%d cached=%d, want 150, 7, 50", in, out, cached)
	}

	reqs := s.RequestsTo("/v1beta/")
	if len(reqs) != 1 || reqs[0].Messages == nil || reqs[0].Query != "alt=sse" {
		t.Fatalf("requests = %+v", reqs)
	}
	mr := reqs[0].Messages
	if mr.Model != "gemini-test" || !mr.Stream || len(mr.System) != 1 || strings.Join(mr.ToolNames(), ",") != "write_file,run_shell_command" {
		t.Errorf("decoded request: model %q stream %v system %v tools %v", mr.Model, mr.Stream, mr.System, mr.ToolNames())
	}
	if p := mr.Prompts(); len(p) != 1 || p[0] != "<session_context/>\ncreate hello.txt" {
		t.Errorf("prompts = %q", p)
	}
}

func TestGeminiFunctionResponseContinuesTheIteration(t *testing.T) {
	s := Start(t, Script{Iterations: []Iteration{
		{Turns: []Turn{
			ToolTurn("", "run_shell_command", map[string]string{"command": "ls"}),
			TextTurn("saw {{tool_result}}"),
		}},
		{Turns: []Turn{TextTurn("second")}},
	}})
	_, raw := post(t, s.URL, "/v1beta/models/m:generateContent", geminiBody())
	var first map[string]any
	if err := json.Unmarshal(raw, &first); err != nil {
		t.Fatal(err)
	}
	parts, finish := candidate(t, first)
	if len(parts) != 1 || finish != "STOP" {
		t.Fatalf("first reply %s", raw)
	}
	fc := parts[0].(map[string]any)["functionCall"].(map[string]any)
	// Gemini CLI renames call ids to "<tool>__<id>" and sends them back so.
	cliID := "run_shell_command__" + fc["id"].(string)
	_, raw = post(t, s.URL, "/v1beta/models/m:generateContent", geminiBody(
		msg{"role": "model", "parts": []msg{{"text": "thinking", "thought": true}, {"functionCall": msg{"id": cliID, "name": "run_shell_command", "args": msg{"command": "ls"}}}}},
		msg{"role": "user", "parts": []msg{{"functionResponse": msg{"id": cliID, "name": "run_shell_command", "response": msg{"output": "a.txt"}}}}},
	))
	var second map[string]any
	if err := json.Unmarshal(raw, &second); err != nil {
		t.Fatal(err)
	}
	if parts, _ := candidate(t, second); len(parts) != 1 || parts[0].(map[string]any)["text"] != "saw a.txt" {
		t.Errorf("second reply %s", raw)
	}
	reqs := s.MessageRequests()
	r := reqs[1]
	if r.Iteration != 0 || r.Turn != 1 || r.Messages.Stream {
		t.Errorf("continuation answered as iteration %d turn %d (stream %v)", r.Iteration, r.Turn, r.Messages.Stream)
	}
	conv := r.Messages.Conversation()
	if uses := conv[len(conv)-2].Content.ToolUses(); len(uses) != 1 || len(conv[len(conv)-2].Content) != 1 {
		t.Errorf("model turn decoded as %+v (thoughts must be dropped)", conv[len(conv)-2].Content)
	}
	_, raw = post(t, s.URL, geminiStream, msg{"contents": []msg{{"role": "user", "parts": []msg{{"text": "again"}}}}})
	if !strings.Contains(string(raw), `"text":"second"`) {
		t.Errorf("new session reply %s", raw)
	}
}

func TestGeminiFunctionResponseText(t *testing.T) {
	for in, want := range map[string]string{
		`{"output":"ok"}`:          "ok",
		`{"error":"denied"}`:       "denied",
		`{"llmContent":["a","b"]}`: `{"llmContent":["a","b"]}`,
	} {
		if got := functionResponseText(json.RawMessage(in)); got != want {
			t.Errorf("functionResponseText(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestGeminiOtherMethods(t *testing.T) {
	s := Start(t, Script{})
	resp, raw := post(t, s.URL, "/v1beta/models/m:countTokens", geminiBody())
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"totalTokens":`) {
		t.Errorf("countTokens: %d %s", resp.StatusCode, raw)
	}
	resp, raw = post(t, s.URL, "/v1beta/models/m:embedContent", msg{})
	if resp.StatusCode != 404 || !strings.Contains(string(raw), `"status":"NOT_FOUND"`) {
		t.Errorf("unknown method: %d %s", resp.StatusCode, raw)
	}
	resp, raw = postString(t, s.URL+geminiStream, `{"contents":7}`)
	if resp.StatusCode != 400 || !strings.Contains(string(raw), `"status":"INVALID_ARGUMENT"`) {
		t.Errorf("undecodable: %d %s", resp.StatusCode, raw)
	}
	resp, raw = post(t, s.URL, geminiStream, geminiBody())
	if resp.StatusCode != 500 || !strings.Contains(string(raw), "script has no reply") {
		t.Errorf("exhausted script: %d %s", resp.StatusCode, raw)
	}
	if p := s.Problems(); len(p) != 2 {
		t.Errorf("problems = %q", p)
	}
}

func TestGeminiErrors(t *testing.T) {
	now := time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		turn        Turn
		wantStatus  int
		wantRPC     string
		wantMessage string
		wantQuota   string
		wantDelay   string
	}{
		{
			name: "usage limit", turn: UsageLimitTurn("GenerateRequestsPerDayPerProjectPerModel", now.Add(3*time.Hour)),
			wantStatus: 429, wantRPC: "RESOURCE_EXHAUSTED", wantMessage: "Please retry in 10800s.",
			wantQuota: "GenerateRequestsPerDayPerProjectPerModel", wantDelay: "10800s",
		},
		{
			name: "usage limit relative", turn: Turn{Error: &ErrorReply{Status: 429, UsageLimit: &UsageLimit{Claim: "five_hour", ResetsIn: Duration(10 * time.Minute)}}},
			wantStatus: 429, wantRPC: "RESOURCE_EXHAUSTED", wantMessage: "Please retry in 600s.", wantQuota: "five_hour", wantDelay: "600s",
		},
		{name: "plain 429", turn: ErrorTurn(429, ""), wantStatus: 429, wantRPC: "RESOURCE_EXHAUSTED", wantMessage: "Resource has been exhausted"},
		{name: "overloaded", turn: ErrorTurn(529, ""), wantStatus: 529, wantRPC: "UNAVAILABLE", wantMessage: "overloaded"},
		{name: "rpc status as type", turn: Turn{Error: &ErrorReply{Status: 400, Type: "FAILED_PRECONDITION", Message: "x"}}, wantStatus: 400, wantRPC: "FAILED_PRECONDITION", wantMessage: "x"},
		{name: "anthropic type ignored", turn: Turn{Error: &ErrorReply{Status: 400, Type: "invalid_request_error"}}, wantStatus: 400, wantRPC: "INVALID_ARGUMENT", wantMessage: "invalid argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Script{Iterations: []Iteration{{Turns: []Turn{tt.turn}}}}, WithClock(func() time.Time { return now }))
			resp, raw := post(t, s.URL, geminiStream, geminiBody())
			if resp.StatusCode != tt.wantStatus || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
			var body struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
					Status  string `json:"status"`
					Details []struct {
						Type       string `json:"@type"`
						RetryDelay string `json:"retryDelay"`
						Violations []struct {
							QuotaID string `json:"quotaId"`
						} `json:"violations"`
					} `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatal(err)
			}
			e := body.Error
			if e.Code != tt.wantStatus || e.Status != tt.wantRPC || !strings.Contains(e.Message, tt.wantMessage) {
				t.Errorf("error = %s", raw)
			}
			var quota, delay string
			for _, d := range e.Details {
				switch d.Type {
				case "type.googleapis.com/google.rpc.QuotaFailure":
					quota = d.Violations[0].QuotaID
				case "type.googleapis.com/google.rpc.RetryInfo":
					delay = d.RetryDelay
				}
			}
			if quota != tt.wantQuota || delay != tt.wantDelay {
				t.Errorf("quota id %q retry delay %q, want %q %q", quota, delay, tt.wantQuota, tt.wantDelay)
			}
		})
	}
}
