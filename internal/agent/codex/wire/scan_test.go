package wire

import (
	"testing"

	"ralph/internal/activity/activitytest"
)

// What the Scanner hands the analyzer from each kind of event.
func TestScannerFacts(t *testing.T) {
	tests := []struct{ name, typ, line, want string }{
		{"thread", "thread.started", `{"type":"thread.started","thread_id":"t1"}`, "session t1"},
		{"message", "item.completed", `{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"Done."}}`, `text  "Done."`},
		{"a command that failed", "item.completed",
			`{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"bash -lc 'go test'","aggregated_output":"FAIL x\n","exit_code":1,"status":"failed"}}`,
			"tool shell command=\"bash -lc 'go test'\" path=\"\"\ntool failed \"FAIL x\\n\""},
		{"a command that passed", "item.completed",
			`{"type":"item.completed","item":{"type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":0}}`,
			`tool shell command="ls" path=""`},
		{"a command still running", "item.started", `{"type":"item.started","item":{"type":"command_execution","command":"ls"}}`, ""},
		{"file changes", "item.completed",
			`{"type":"item.completed","item":{"type":"file_change","changes":[{"path":"/p/a.go","kind":"add"},{"path":"b.go","kind":"update"}]}}`,
			"tool file_change command=\"\" path=\"/p/a.go\"\ntool file_change command=\"\" path=\"b.go\""},
		{"other tools", "item.completed", `{"type":"item.completed","item":{"type":"mcp_tool_call","server":"s","tool":"t"}}`,
			`tool mcp_tool_call command="" path=""`},
		{"usage", "turn.completed", `{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":3,"output_tokens":2}}`,
			"usage in=5 out=2 cache_read=3 cache_write=0 cost=0 tokens=true"},
		{"a failed turn", "turn.failed", `{"type":"turn.failed","error":{"message":"You've hit your usage limit."}}`,
			"failed\nerror \"You've hit your usage limit.\""},
		{"an error event", "error", `{"type":"error","message":"stream disconnected"}`, `error "stream disconnected"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { activitytest.CheckEvent(t, NewScanner, tt.typ, tt.line, tt.want) })
	}
}
