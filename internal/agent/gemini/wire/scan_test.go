package wire

import (
	"testing"

	"ralph/internal/activity/activitytest"
)

// What the Scanner hands the analyzer from each kind of event.
func TestScannerFacts(t *testing.T) {
	tests := []struct{ name, typ, line, want string }{
		{"init", "init", `{"type":"init","session_id":"g1","model":"m"}`, "session g1"},
		{"a delta", "message", `{"type":"message","role":"assistant","content":"Work","delta":true}`, `delta "Work"`},
		{"a whole message", "message", `{"type":"message","role":"model","content":"Done."}`, `text  "Done."`},
		{"the prompt", "message", `{"type":"message","role":"user","content":"Do it."}`, ""},
		{"a tool call", "tool_use", `{"type":"tool_use","tool_name":"write_file","parameters":{"file_path":"a.txt","content":"x"}}`,
			`tool write_file command="" path="a.txt"`},
		{"a tool that failed", "tool_result", `{"type":"tool_result","status":"error","output":"out","error":{"type":"io","message":"no such file"}}`,
			"tool failed \"out\"\ntool failed \"no such file\""},
		{"a tool that did not", "tool_result", `{"type":"tool_result","status":"success","output":"ok"}`, ""},
		{"an error event", "error", `{"type":"error","severity":"error","message":"quota"}`, `error "quota"`},
		{"a failed result with flat stats", "result",
			`{"type":"result","status":"error","error":{"type":"x","message":"boom"},"stats":{"input_tokens":7,"output_tokens":2,"cached":1}}`,
			"failed\nerror \"boom\"\ntool totals 0 calls, 0 writes\nusage in=7 out=2 cache_read=1 cache_write=0 cost=0 tokens=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { activitytest.CheckEvent(t, NewScanner, tt.typ, tt.line, tt.want) })
	}
}

// The json output: the answer, per-model tokens, tool totals (successful
// calls of the tools that write files), and the API's error object.
func TestScannerDocument(t *testing.T) {
	var f activitytest.Facts
	NewScanner(&f).Document([]byte(`{"session_id":"g","response":"Done.","stats":{"models":{"m":{"tokens":{"prompt":4,"candidates":2,"cached":1}}},` +
		`"tools":{"totalCalls":3,"byName":{"write_file":{"count":2,"success":2},"read_file":{"count":1,"success":1}}}}}`))
	want := "session g\nanswer \"Done.\"\ntool totals 3 calls, 2 writes\nusage in=4 out=2 cache_read=1 cache_write=0 cost=0 tokens=true"
	if got := f.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	f.Lines = nil
	NewScanner(&f).Document([]byte(`{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED"}}`))
	want = "failed\nerror \"RESOURCE_EXHAUSTED: Quota exceeded.\"\nquota error \"RESOURCE_EXHAUSTED: Quota exceeded.\""
	if got := f.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A result is Gemini CLI's when it carries stats and nothing of Claude
// Code's.
func TestIsResult(t *testing.T) {
	for line, want := range map[string]bool{
		`{"type":"result","status":"success","stats":{}}`:                true,
		`{"type":"result","stats":{},"result":"x"}`:                      false,
		`{"type":"result","stats":{},"usage":{}}`:                        false,
		`{"type":"result","subtype":"success","is_error":false}`:         false,
		`{"type":"result","status":"success","stats":{}, "tool_name":1}`: false,
	} {
		if got := IsResult([]byte(line)); got != want {
			t.Errorf("IsResult(%s) = %v, want %v", line, got, want)
		}
	}
}
