package wire

import (
	"testing"

	"ralph/internal/agent/agenttest"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		head string
		want bool
	}{
		{"captured run", string(agenttest.ReadFile(t, "../testdata/opencode_run_json_write_bash_success.jsonl")), true},
		{"captured error", string(agenttest.ReadFile(t, "../testdata/opencode_run_json_401_error.jsonl")), true},
		{"first line cut short by the peek", `{"type":"step_start","timestamp":1,"sessionID":"ses_a","part":{"te`, false},
		{"a warning before the events", "warning: old config\n" + `{"type":"text","sessionID":"ses_a","part":{"text":"hi"}}` + "\n", true},
		{"text output", "All done.\n", false},
		{"empty", "", false},
		{"Gemini CLI stream-json", `{"type":"init","timestamp":"2026-11-21T01:31:14.937Z","session_id":"2a6d","model":"gemini-2.5-pro"}` + "\n", false},
		{"Gemini CLI tool_use", `{"type":"tool_use","tool_name":"write_file","parameters":{}}` + "\n", false},
		{"Codex error first", `{"type":"error","message":"bad key"}` + "\n" + `{"type":"turn.failed"}` + "\n", false},
		{"Claude Code json", `{"type":"result","subtype":"success","is_error":false,"session_id":"d571"}`, false},
		{"an unknown type with a session id", `{"type":"session.updated","sessionID":"ses_a"}`, false},
	}
	for _, tt := range tests {
		if got := Detect([]byte(tt.head)); got != tt.want {
			t.Errorf("%s: Detect = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestEventAccessors(t *testing.T) {
	tests := []struct {
		line, wantErr, wantOut string
		rejected               bool
	}{
		{`{"type":"error","sessionID":"s","error":{"name":"APIError","data":{"message":" invalid x-api-key ","statusCode":401}}}`, "invalid x-api-key", "", false},
		{`{"type":"error","sessionID":"s","error":{"name":"UnknownError"}}`, "UnknownError", "", false},
		{`{"type":"error","sessionID":"s"}`, "OpenCode reported an error", "", false},
		{`{"type":"tool_use","sessionID":"s","part":{"tool":"bash","state":{"status":"completed","output":"ok\n"}}}`, "", "ok\n", false},
		{`{"type":"tool_use","sessionID":"s","part":{"tool":"edit","state":{"status":"error","error":"The user rejected permission to use this specific tool call."}}}`, "", "", true},
	}
	for _, tt := range tests {
		ev, ok := ParseEvent([]byte(tt.line))
		if !ok {
			t.Fatalf("%s: not an event", tt.line)
		}
		if got := ev.ErrorMessage(); tt.wantErr != "" && got != tt.wantErr {
			t.Errorf("%s: error message %q, want %q", tt.line, got, tt.wantErr)
		}
		if got := ev.Part.State.OutputText(); got != tt.wantOut {
			t.Errorf("%s: output %q, want %q", tt.line, got, tt.wantOut)
		}
		if ev.Part.Rejected() != tt.rejected {
			t.Errorf("%s: rejected %v", tt.line, !tt.rejected)
		}
	}
	for _, line := range []string{"", "text", `{"part":{}}`, `{"type":"text","part":`} {
		if _, ok := ParseEvent([]byte(line)); ok {
			t.Errorf("%q parsed as an event", line)
		}
	}
}
