package agenttest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTestdataIsWellFormed keeps the committed captures of Codex, Gemini
// CLI and OpenCode usable without the CLIs installed: each is NDJSON, one
// JSON object, or (stderr) text ending in one, and ends the way its run
// ended.
func TestTestdataIsWellFormed(t *testing.T) {
	tests := []struct {
		name     string
		wantLast string // in the last line, or in the whole file for .json
	}{
		{"codex_exec_json_shell_success.jsonl", `"type":"turn.completed"`},
		{"codex_exec_json_apply_patch_success.jsonl", `"type":"turn.completed"`},
		{"codex_exec_json_usage_limit.jsonl", `try again at `},
		{"codex_exec_json_usage_limit_today.jsonl", `try again at `},
		{"gemini_json_write_file_success.json", `"response": "Done.`},
		{"gemini_stream_json_write_file_shell_success.jsonl", `"status":"success"`},
		{"gemini_json_429_quota.stderr", `Please retry in 10800s.`},
		{"gemini_stream_json_429_quota.jsonl", `Please retry in 10800s.`},
		{"opencode_run_json_write_bash_success.jsonl", `"reason":"stop"`},
		{"opencode_run_json_401_error.jsonl", `"statusCode":401`},
	}
	port := regexp.MustCompile(`127\.0\.0\.1:(\d+)`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.name))
			if err != nil {
				t.Fatalf("%v (regenerate with: go test ./internal/agent/agenttest -update)", err)
			}
			last := bytes.TrimSpace(data)
			switch filepath.Ext(tt.name) {
			case ".jsonl":
				lines := bytes.Split(last, []byte("\n"))
				for i, l := range lines {
					if !json.Valid(l) {
						t.Fatalf("line %d is not JSON", i+1)
					}
				}
				last = lines[len(lines)-1]
			case ".json":
				if !json.Valid(last) {
					t.Fatal("not one JSON value")
				}
			case ".stderr":
				i := bytes.LastIndex(last, []byte("\n{\n"))
				if i < 0 || !json.Valid(last[i+1:]) {
					t.Fatal("does not end in a JSON object")
				}
				last = last[i+1:]
			}
			if !strings.Contains(string(last), tt.wantLast) {
				t.Errorf("ending does not contain %q:\n%s", tt.wantLast, last)
			}
			if bytes.Contains(data, []byte(RepoRoot(t))) || bytes.Contains(data, []byte("/Test")) || bytes.Contains(data, []byte("-Test")) {
				t.Error("fixture holds a machine-specific path")
			}
			for _, m := range port.FindAllSubmatch(data, -1) {
				if string(m[1]) != "8765" {
					t.Errorf("fixture names the fake's real port %s", m[1])
				}
			}
		})
	}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		known := e.Name() == "README.md"
		for _, tt := range tests {
			known = known || tt.name == e.Name()
		}
		if !known {
			t.Errorf("testdata/%s is not checked here", e.Name())
		}
	}
}
