package analyze

import (
	"maps"
	"os"
	"testing"
	"time"
)

// Verbatim outputs of the real CLIs (testdata/samples) and what ralph must
// read out of each.
func TestVerbatimSamples(t *testing.T) {
	now := time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)
	cases := []struct {
		file   string
		exit   int
		expect map[string]any
	}{
		{"claude_json_success.json", 0, map[string]any{
			"format": "json", "is_error": false, "session_id": "d571e318-959a-4e1b-b04f-cce3b75c87e4",
			"usage.input_tokens": 100.0, "usage.output_tokens": 20.0, "usage.cost_usd": 0.0008,
			"usage_limit.detected": false, "summary": "Hello from the fake model!",
			// ---STATUS--- is not a ralph dialect: reported, not obeyed.
			"status_block": nil, "exit_signal": false, "warnings": map[string]any{"min": 2.0},
		}},
		{"claude_json_429_apikey.json", 1, map[string]any{
			"is_error": true, "usage_limit.detected": true, "usage_limit.kind": "unknown",
			"usage_limit.resets_at": "", "errors": map[string]any{"len": 1.0},
		}},
		{"claude_json_529.json", 1, map[string]any{
			"is_error": true, "usage_limit.detected": false, "errors.0": map[string]any{"contains": "529 Overloaded"},
		}},
		{"claude_json_5h_limit_oauth.json", 1, map[string]any{
			"is_error": true, "usage_limit.detected": true, "usage_limit.kind": "five_hour",
			"usage_limit.resets_at": "2026-11-21T00:00:00Z", "session_id": "b7ab586f-6c56-47da-b4e6-27ae17a13afa",
		}},
		{"claude_json_error_max_turns.json", 1, map[string]any{
			"is_error": true, "errors": []any{"Reached maximum number of turns (1)"}, "usage_limit.detected": false,
			"usage.input_tokens": 100.0, "usage.cost_usd": 0.0008, "summary": "",
		}},
		{"claude_json_permission_denied.json", 0, map[string]any{
			"permission_denials": []any{map[string]any{"tool": "Write", "command": ""}}, "has_completion_signal": true,
			"usage.input_tokens": 300.0, "usage.output_tokens": 60.0,
		}},
		{"claude_stream_json_5h_limit_oauth.jsonl", 1, map[string]any{
			"format": "stream-json", "usage_limit.detected": true, "usage_limit.kind": "five_hour",
			// The rate_limit_event's epoch is exact; the text says only "12am".
			"usage_limit.resets_at": "2026-11-21T00:00:58Z", "session_id": "4fc52fdf-ecdd-40ec-b019-41fdd1dd1b4c",
		}},
		{"claude_stream_json_tools.jsonl", 0, map[string]any{
			"format": "stream-json", "is_error": false, "session_id": "1f619081-1f59-4397-bd4c-8791b3f050a0",
			"work_type": "IMPLEMENTATION", "files_modified": 1.0, "is_test_only": false,
			// usage from the result only: the per-message usage is not added again
			"usage.input_tokens": 300.0, "usage.output_tokens": 60.0, "usage.cost_usd": 0.0024,
			"errors": map[string]any{"len": 0.0}, "usage_limit.detected": false,
		}},
		{"codex_exec_json_tools.jsonl", 0, map[string]any{
			"format": "stream-json", "session_id": "01a1fb32-e644-7040-841a-1992e7a63f0a",
			"usage.input_tokens": 200.0, "usage.output_tokens": 40.0, "work_type": "IMPLEMENTATION",
			"errors": map[string]any{"len": 0.0}, "is_error": false, "has_completion_signal": true,
		}},
		{"codex_exec_json_usage_limit.jsonl", 1, map[string]any{
			"usage_limit.detected": true, "usage_limit.resets_at": "2026-11-21T01:05:00Z", "is_error": true,
			"session_id": "01a1fb35-0559-7440-9c89-52f9264ab1de",
		}},
		{"gemini_json_hello.json", 0, map[string]any{
			"format": "json", "session_id": "fb1e2adb-54ee-48ce-99ef-22ab9fabd299",
			// two models answered (router and main): both count
			"usage.input_tokens": 200.0, "usage.output_tokens": 40.0, "summary": "Hello from fake gemini!",
		}},
		{"gemini_json_tools.json", 0, map[string]any{
			"format": "json", "session_id": "18ca0f01-95a8-4805-885d-ed5093553531",
			"usage.input_tokens": 300.0, "usage.output_tokens": 60.0, "has_completion_signal": true,
		}},
		{"gemini_stream_json_tools.jsonl", 0, map[string]any{
			"format": "stream-json", "session_id": "922c1e13-16a1-45b4-9cb8-bad34e7135f9",
			"usage.input_tokens": 400.0, "usage.output_tokens": 80.0, "work_type": "IMPLEMENTATION",
			"files_modified": 1.0, "summary": "Done.",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			got := analyzeFileJSON(t, "testdata/samples/"+tc.file, Options{ExitCode: tc.exit, Now: now})
			for path, want := range tc.expect {
				if err := match(lookup(got, path), want); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
		})
	}
}

// Outputs of the real Claude Code CLI run against the project's fake API
// (testdata/real, written by internal/agent/agenttest -update).
func TestRealCLIOutputs(t *testing.T) {
	now := time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)
	limit := func(kind, reset string) map[string]any {
		return map[string]any{"usage_limit.detected": true, "usage_limit.kind": kind, "usage_limit.resets_at": reset, "is_error": true}
	}
	done := map[string]any{"status": "COMPLETE", "exit_signal": true, "is_error": false, "usage_limit.detected": false,
		"errors": map[string]any{"len": 0.0}, "usage.input_tokens": map[string]any{"min": 1.0}}
	cases := map[string]map[string]any{
		"claude_json_429_unified_headers_apikey.json":         limit("unknown", ""),
		"claude_stream_json_429_unified_headers_apikey.jsonl": limit("unknown", ""),
		"claude_json_5h_limit_oauth.json":                     limit("five_hour", "2026-11-21T03:00:00Z"),
		"claude_stream_json_5h_limit_oauth.jsonl":             limit("five_hour", "2026-11-21T03:00:00Z"),
		"claude_json_weekly_limit_oauth.json":                 limit("weekly", "2026-11-24T00:00:00Z"),
		"claude_json_529_overloaded_oauth.json":               {"is_error": true, "usage_limit.detected": false, "setup_failure.detected": false},
		"claude_json_not_logged_in.json": {"is_error": true, "usage_limit.detected": false, "setup_failure.detected": true,
			"setup_failure.kind": "auth", "setup_failure.message": "Not logged in · Please run /login"},
		"claude_json_permission_denied_write.json":    {"permission_denials": []any{map[string]any{"tool": "Write", "command": ""}}},
		"claude_json_write_bash_success.json":         done,
		"claude_json_resumed_success.json":            done,
		"claude_stream_json_write_bash_success.jsonl": done,
	}
	for file, expect := range cases {
		t.Run(file, func(t *testing.T) {
			got := analyzeFileJSON(t, "testdata/real/"+file, Options{ExitCode: 1, Now: now})
			for path, want := range expect {
				if err := match(lookup(got, path), want); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
		})
	}
}

// Outputs of the real Codex and Gemini CLIs run against the project's fake
// API (testdata/real, copied from internal/agent/agenttest/testdata).
func TestRealCodexGeminiOutputs(t *testing.T) {
	now := time.Date(2026, 11, 21, 1, 31, 0, 0, time.UTC)
	geminiQuota := map[string]any{
		"is_error": true, "usage_limit.detected": true, "usage_limit.kind": "unknown",
		// "Please retry in 10800s." is two lines below the quota sentence.
		"usage_limit.resets_at": "2026-11-21T04:31:00Z", "usage_limit.message": map[string]any{"contains": "Please retry in 10800s."},
		"errors": map[string]any{"len": 1.0}, "errors.0": map[string]any{"contains": "Please retry in 10800s."},
		"warnings": []any{"no status block; heuristics used"},
	}
	quota := func(more map[string]any) map[string]any {
		m := maps.Clone(geminiQuota)
		maps.Copy(m, more)
		return m
	}
	cases := []struct {
		file, stderr string
		exit         int
		expect       map[string]any
	}{
		{"gemini_stream_json_429_quota.jsonl", "", 173, quota(map[string]any{
			"format": "stream-json", "session_id": "583572d7-ac77-46f5-8083-0328c1081a73",
		})},
		// json output leaves stdout empty: the report is the object ending stderr.
		{"", "gemini_json_429_quota.stderr", 173, quota(map[string]any{
			"session_id": "9a4ec7b7-0090-4889-a317-4346160158c0",
		})},
		{"gemini_json_write_file_success.json", "", 0, map[string]any{
			"format": "json", "status": "COMPLETE", "exit_signal": true, "is_error": false,
			// Only the stats tell of the write_file call.
			"work_type": "IMPLEMENTATION", "files_modified": 1.0, "is_test_only": false,
			"usage.input_tokens": 23645.0, "usage.output_tokens": 54.0, "session_id": "d1b6158a-8b18-4723-97ae-85dfd8f67d56",
		}},
		{"gemini_stream_json_write_file_shell_success.jsonl", "", 0, map[string]any{
			"format": "stream-json", "status": "COMPLETE", "exit_signal": true, "summary": "Done.",
			"work_type": "IMPLEMENTATION", "files_modified": 1.0, "usage.input_tokens": 35718.0, "usage.output_tokens": 76.0,
			"errors": map[string]any{"len": 0.0}, "session_id": "2a6d7d67-5541-4733-be86-31d576a34d69",
		}},
		{"codex_exec_json_shell_success.jsonl", "", 0, map[string]any{
			"status": "COMPLETE", "exit_signal": true, "work_type": "IMPLEMENTATION", "usage.input_tokens": 19673.0,
			"errors": map[string]any{"len": 0.0}, "session_id": "01a1fbba-8af2-7e93-bf8e-3c0e57a739a2",
		}},
		{"codex_exec_json_apply_patch_success.jsonl", "", 0, map[string]any{
			"status": "COMPLETE", "work_type": "IMPLEMENTATION", "files_modified": 1.0,
		}},
		{"codex_exec_json_usage_limit.jsonl", "", 1, map[string]any{
			"is_error": true, "usage_limit.detected": true, "usage_limit.resets_at": "2026-11-22T01:05:00Z",
			"errors": map[string]any{"len": 1.0},
		}},
		{"codex_exec_json_usage_limit_today.jsonl", "", 1, map[string]any{
			"usage_limit.detected": true, "usage_limit.resets_at": "2026-11-21T02:00:00Z",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file+tc.stderr, func(t *testing.T) {
			opts := Options{ExitCode: tc.exit, Now: now}
			if tc.stderr != "" {
				b, err := os.ReadFile("testdata/real/" + tc.stderr)
				if err != nil {
					t.Fatal(err)
				}
				opts.Stderr = b
			}
			in := os.DevNull
			if tc.file != "" {
				in = "testdata/real/" + tc.file
			}
			got := analyzeFileJSON(t, in, opts)
			for path, want := range tc.expect {
				if err := match(lookup(got, path), want); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
		})
	}
}
