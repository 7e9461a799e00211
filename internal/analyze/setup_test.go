package analyze

import (
	"strings"
	"testing"
	"time"
)

func TestSetupFailure(t *testing.T) {
	tests := []struct {
		name, out, stderr string
		exit              int
		kind              string
	}{
		{"claude not logged in", `{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login"}`, "", 1, SetupAuth},
		{"claude invalid key", `{"type":"result","is_error":true,"api_error_status":401,"result":"Invalid API key · Fix external API key"}`, "", 1, SetupAuth},
		{"codex unknown model", `{"type":"turn.failed","error":{"message":"model_not_found: The model 'gpt-9' does not exist or you do not have access to it."}}`, "", 1, SetupModel},
		{"gemini key", "", `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`, 1, SetupAuth},
		{"an unknown flag on stderr", "", "error: unknown option '--frobnicate'\n", 1, SetupUsage},
		{"a 529 is not setup", `{"type":"result","is_error":true,"result":"API Error: 529 Overloaded"}`, "", 1, ""},
		{"a usage limit is not setup", `{"type":"result","is_error":true,"result":"You've hit your 5-hour limit · resets 9pm (UTC)"}`, "", 1, ""},
		// Words about keys in the work of a call that succeeded are work.
		{"success that mentions a key", `{"type":"result","subtype":"success","is_error":false,"result":"Handled the invalid API key case; not logged in users now see a 401."}`, "", 0, ""},
		{"plain text that exits 0", "Fixed: unknown option --x is now rejected.", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(strings.NewReader(tt.out), Options{ExitCode: tt.exit, Stderr: []byte(tt.stderr), Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if got := a.SetupFailure; got.Detected != (tt.kind != "") || got.Kind != tt.kind || got.Detected && got.Message == "" {
				t.Errorf("setup failure %+v, want kind %q", got, tt.kind)
			}
		})
	}
}
