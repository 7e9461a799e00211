package analyze

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzAnalyze: whatever the agent printed, the analyzer never panics, always
// produces an object that encodes as valid JSON with the contract's lists
// non-nil, and reads the same input the same way twice.
func FuzzAnalyze(f *testing.F) {
	for _, dir := range []string{"testdata/conformance/*.input", "testdata/samples/*"} {
		files, _ := filepath.Glob(dir)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
				f.Add(b, 0)
			}
		}
	}
	f.Add([]byte("---RALPH_STATUS---\nSTATUS: COMPLETE\n"), 1)
	f.Add([]byte(`{"type":"result","result":"`), 1)
	f.Add([]byte("[{\"type\":\"assistant\"},"), 0)
	f.Add([]byte("{\"a\":\"\\ud800\\u\"}"), 0)
	f.Fuzz(func(t *testing.T, in []byte, exit int) {
		opts := Options{ExitCode: exit, Now: testNow, AllowedTools: []string{"Bash(git *)", "Write"}}
		a, err := Analyze(bytes.NewReader(in), opts)
		if err != nil {
			t.Fatalf("Analyze: %v", err)
		}
		out, err := json.Marshal(a)
		if err != nil || !json.Valid(out) {
			t.Fatalf("not valid JSON: %v", err)
		}
		if a.Errors == nil || a.Warnings == nil || a.PermissionDenials == nil || a.ClarificationQuestions == nil {
			t.Fatal("a contract list is nil")
		}
		switch a.Format {
		case FormatJSON, FormatStreamJSON, FormatText:
		default:
			t.Fatalf("format %q", a.Format)
		}
		if a.CompletionIndicators < 0 || a.CompletionIndicators > 4 {
			t.Fatalf("completion_indicators %d", a.CompletionIndicators)
		}
		b, _ := Analyze(bytes.NewReader(in), opts)
		again, _ := json.Marshal(b)
		if !bytes.Equal(out, again) {
			t.Fatal("two readings of the same input differ")
		}
	})
}
