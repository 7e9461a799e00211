package analyze

import (
	"encoding/json"
	"strings"
	"testing"
)

// Gemini CLI's multi-line error messages, its json stats and its whole
// (non-delta) messages, beyond the verbatim samples.
func TestGeminiCases(t *testing.T) {
	msg := func(content string, delta bool) string {
		d := ""
		if delta {
			d = `,"delta":true`
		}
		return `{"type":"message","role":"assistant","content":` + quote(content) + d + `}`
	}
	errResult := func(message string) string {
		return `{"type":"result","status":"error","error":{"type":"unknown","message":` + quote(message) + `},"stats":{"input_tokens":0}}`
	}
	jsonDoc := func(byName string) string {
		return `{"session_id":"g","response":"Done.","stats":{"models":{},"tools":{"totalCalls":2,"byName":{` + byName + `}}}}`
	}
	block := func(status string) string {
		return "---RALPH_STATUS---\nSTATUS: " + status + "\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---"
	}
	cases := []struct {
		name   string
		input  string
		expect map[string]any
	}{
		{"reset on a later line of the limit message",
			lines(errResult("[API Error: You exceeded your current quota.\n* Quota exceeded for quota id: X\nPlease retry in 90s.]")),
			map[string]any{"usage_limit.detected": true, "usage_limit.resets_at": "2026-11-20T20:01:30Z",
				"errors": []any{"[API Error: You exceeded your current quota. * Quota exceeded for quota id: X Please retry in 90s.]"}}},
		{"a long multi-line error is cut at a character boundary",
			lines(errResult("Error: booms\n" + strings.Repeat("é", 400))),
			map[string]any{"errors.0": "Error: booms " + strings.Repeat("é", 143) + "…", "usage_limit.detected": false}},
		{"json stats: one successful write is one file",
			jsonDoc(`"write_file":{"count":1,"success":1,"fail":0},"read_file":{"count":1,"success":1}`),
			map[string]any{"work_type": "IMPLEMENTATION", "files_modified": 1.0, "is_test_only": false}},
		{"json stats: two edits may be of one file",
			jsonDoc(`"write_file":{"count":1,"success":1},"replace":{"count":1,"success":1}`),
			map[string]any{"work_type": "IMPLEMENTATION", "files_modified": -1.0}},
		{"json stats: a failed write changed nothing",
			jsonDoc(`"write_file":{"count":1,"success":0,"fail":1}`),
			map[string]any{"work_type": "UNKNOWN", "files_modified": -1.0}},
		{"json stats: no tools",
			`{"response":"Hi.","stats":{"models":{}}}`,
			map[string]any{"work_type": "UNKNOWN", "files_modified": -1.0}},
		{"whole messages are separate: a block in the earlier one counts",
			lines(`{"type":"init","session_id":"g"}`, msg("Done.\n"+block("IN_PROGRESS"), false), msg("Bye.", false)),
			map[string]any{"status": "IN_PROGRESS", "summary": "Bye.", "format": "stream-json"}},
		{"deltas, then a whole message",
			lines(msg("Done.\n---RALPH_STATUS---\nSTATUS: BLOC", true), msg("KED\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---", true), msg("Bye.", false)),
			map[string]any{"status": "BLOCKED", "summary": "Bye."}},
		{"a whole message, then deltas",
			lines(msg(block("BLOCKED"), false), msg("All ", true), msg("set.", true)),
			map[string]any{"status": "BLOCKED", "summary": "All set."}},
		{"a block split over two whole messages is no block",
			lines(msg("---RALPH_STATUS---\nSTATUS: COMPLETE", false), msg("EXIT_SIGNAL: true\n---END_RALPH_STATUS---", false)),
			map[string]any{"status_block": nil, "exit_signal": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, tc.input)
			for path, want := range tc.expect {
				if err := match(lookup(got, path), want); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
