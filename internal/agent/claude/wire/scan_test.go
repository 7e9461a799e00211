package wire

import (
	"strings"
	"testing"

	"ralph/internal/activity/activitytest"
)

// mayHoldFailure is whether reading a user event found that a tool result
// in its message may have failed (members.mayFail).
func mayHoldFailure(msg []byte) bool {
	var m members
	if !m.parse([]byte(`{"type":"user","message":` + string(msg) + `}`)) {
		return false
	}
	return m.mayFail
}

// A user message is scanned again only when a tool result in it can have
// failed.
func TestMayHoldFailure(t *testing.T) {
	for msg, want := range map[string]bool{
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error":true}]}`:                    true,
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error" : true}]}`:                  true,
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error":"true"}]}`:                  true,
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error":false}]}`:                   false,
		`{"role":"user","content":[{"type":"tool_result","content":"x"}]}`:                                    false,
		`{"role":"user","content":[{"type":"tool_result","content":"{\"is_error\":true}","is_error":false}]}`: false,
		`{"role":"user","content":[{"type":"tool_result","content":"\"is_error\"","is_error":false}]}`:        false,
		`{"role":"user","content":[{"type":"tool_result","content":"x","is_error":false},{"is_error":true}]}`: true,
		`{"role":"user","content":[{"type":"tool_result","name":"is_error","content":"x","is_error":	true}]}`: true,
	} {
		if got := mayHoldFailure([]byte(msg)); got != want {
			t.Errorf("mayHoldFailure(%s) = %v, want %v", msg, got, want)
		}
	}
}

// What the Scanner hands the analyzer from each kind of event.
func TestScannerFacts(t *testing.T) {
	tests := []struct{ name, typ, line, want string }{
		{"init", "system", `{"type":"system","subtype":"init","session_id":"s1","cwd":"/p"}`, "session hint s1"},
		{"text, tool calls and usage", "assistant",
			`{"type":"assistant","session_id":"s1","message":{"id":"m1","content":[{"type":"text","text":"Hi \u00e9"},` +
				`{"type":"tool_use","name":"Bash","input":{"command":"go test ./..."}},{"type":"server_tool_use","name":"web_search","input":{"query":"q"}},` +
				`{"type":"tool_use","name":"Write","input":{"file_path":"/p/a.go","content":"x"}}],"usage":{"input_tokens":3,"output_tokens":2}}}`,
			"session hint s1\ntext m1 \"Hi é\"\ntool Bash command=\"go test ./...\" path=\"\"\ntool web_search command=\"\" path=\"\"\n" +
				"tool Write command=\"\" path=\"/p/a.go\"\nmessage usage m1 in=3 out=2 cache_read=0 cache_write=0 cost=0"},
		{"a limit flagged, the older string content", "assistant",
			`{"type":"assistant","error":"rate_limit","message":{"content":"You've hit your limit"}}`,
			"limit reached\ntext  \"You've hit your limit\""},
		{"failed tool results only", "user",
			`{"type":"user","message":{"content":[{"type":"tool_result","content":"fine"},{"type":"tool_result","is_error":true,"content":"boom"},` +
				`{"type":"tool_result","is_error":true,"content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}]}}`,
			"tool failed \"boom\"\ntool failed \"a\\nb\\n\""},
		{"no failure, not read", "user", `{"type":"user","message":{"content":[{"type":"tool_result","is_error":false,"content":"x"}]}}`, ""},
		{"the result", "result",
			`{"type":"result","subtype":"success","is_error":false,"session_id":"s2","uuid":"u1","total_cost_usd":0.5,` +
				`"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":2,"cache_creation_input_tokens":1},` +
				`"permission_denials":[{"tool_name":"Bash","tool_input":{"command":"rm -rf x"}},{"tool":"Write","command":"a.txt"},` +
				`{"tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which one?","options":[{"label":"A"},{"label":" B "}]}]}}],` +
				`"errors":["e1"],"result":"Done."}`,
			"result failed=false succeeded=true\nsession s2\nusage in=10 out=5 cache_read=2 cache_write=1 cost=0.5 tokens=true\n" +
				"denied Bash \"rm -rf x\"\ndenied Write \"a.txt\"\nquestion AskUserQuestion \"Which one?\" [\"A\" \"B\"]\nerror note \"e1\"\nresult text \"Done.\" failed=false"},
		{"a failed result: per-model usage, a 429, a limit", "result",
			`{"type":"result","is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","modelUsage":{"a":{"inputTokens":1,"costUSD":0.25},"b":{"outputTokens":2,"costUSD":0.25}},"result":"Limit."}`,
			"result failed=true succeeded=false\nlimit reached\nlimit 429\nusage in=1 out=2 cache_read=0 cache_write=0 cost=0.5 tokens=true\nresult text \"Limit.\" failed=true"},
		{"a rate limit that refused the call, reset in milliseconds", "rate_limit_event",
			`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1763683200000,"rateLimitType":"five_hour"}}`,
			"window five_hour used=1 resets=2025-11-21T00:00:00Z\nlimit rejected resets=2025-11-21T00:00:00Z kind=five_hour"},
		{"one that allowed it", "rate_limit_event", `{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}`, ""},
		{"one that allowed it and told how much of the window is used", "rate_limit_event",
			`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","rateLimitType":"seven_day","utilization":0.8,"resetsAt":1763683200}}`,
			"window seven_day used=0.8 resets=2025-11-21T00:00:00Z"},
		{"stream events carry no facts", "stream_event", `{"type":"stream_event","event":{"delta":{"text":"x"}}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { activitytest.CheckEvent(t, NewScanner, tt.typ, tt.line, tt.want) })
	}
}

// A malformed event gives no facts, even those read before the fault.
func TestScannerMalformed(t *testing.T) {
	var f activitytest.Facts
	sc := NewScanner(&f)
	for _, l := range []string{
		`{"type":"assistant","session_id":"s","message":{"content":[{"type":"text","text":"hi"}]}`,
		`{"type":"assistant","session_id":"s" "message":{}}`,
		`{"type":"result","result":"x","uuid":5}`,
	} {
		if sc.Event([]byte("assistant"), []byte(l)) || len(f.Lines) > 0 {
			t.Errorf("%s: read, facts %q", l, f.Lines)
		}
	}
}

// A result repeated (a resumed transcript) is counted once; an older
// output without a type is a result when it says how the call went.
func TestScannerResultOnce(t *testing.T) {
	var f activitytest.Facts
	sc := NewScanner(&f)
	r := []byte(`{"type":"result","uuid":"u","usage":{"input_tokens":1}}`)
	sc.Event([]byte("result"), r)
	sc.Event([]byte("result"), r)
	if got := strings.Count(f.String(), "usage "); got != 1 {
		t.Errorf("usage counted %d times:\n%s", got, f.String())
	}
	f.Lines = nil
	if !sc.Document([]byte(`{"result":"ok","sessionId":"x"}`)) || !strings.Contains(f.String(), "session x") {
		t.Errorf("legacy result: %q", f.Lines)
	}
	if sc.Document([]byte(`{"status":"COMPLETE"}`)) {
		t.Error("an object without a result's members read as one")
	}
}
