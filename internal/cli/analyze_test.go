package cli

import (
	"errors"
	"io"
	"strings"
	"testing"

	"ralph/internal/analyze"
)

// analyzeOutput sends OpenCode's events through its adapter and every other
// output to the analyzer as it is.
func TestAnalyzeOutput(t *testing.T) {
	const opencodeText = `{"type":"text","timestamp":1,"sessionID":"ses_a","part":{"type":"text","text":"Done.\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---"}}`
	tests := []struct {
		name, in          string
		format, status    string
		session, summary  string
		wantOpenCodeUsage bool
	}{
		{"OpenCode events", `{"type":"step_start","timestamp":1,"sessionID":"ses_a","part":{"type":"step-start"}}` + "\n" + opencodeText + "\n" +
			`{"type":"step_finish","timestamp":2,"sessionID":"ses_a","part":{"type":"step-finish","reason":"stop","tokens":{"input":7,"output":3,"cache":{"read":0,"write":5}},"cost":0.5}}` + "\n",
			"stream-json", "IN_PROGRESS", "ses_a", "Done.", true},
		{"OpenCode after a warning line", "note: using a local config\n" + opencodeText + "\n", "stream-json", "IN_PROGRESS", "ses_a", "Done.", false},
		{"Gemini events of the same names", `{"type":"init","session_id":"g1"}` + "\n" +
			`{"type":"message","role":"assistant","content":"Hi."}` + "\n", "stream-json", "UNKNOWN", "g1", "Hi.", false},
		{"Claude result", `{"type":"result","is_error":false,"session_id":"c1","result":"Done."}`, "json", "UNKNOWN", "c1", "Done.", false},
		{"text", "All done.\n", "text", "UNKNOWN", "", "All done.", false},
		{"empty", "", "text", "UNKNOWN", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := analyzeOutput(strings.NewReader(tt.in), analyze.Options{ExitCode: 0})
			if err != nil {
				t.Fatal(err)
			}
			if a.Format != tt.format || a.Status != tt.status || a.SessionID != tt.session || a.Summary != tt.summary ||
				a.OutputBytes != int64(len(tt.in)) {
				t.Errorf("format %s, status %s, session %q, summary %q, bytes %d", a.Format, a.Status, a.SessionID, a.Summary, a.OutputBytes)
			}
			// Cache writes and cost are what only the adapter reads.
			if got := a.Usage.CacheCreationInputTokens == 5 && a.Usage.CostUSD == 0.5; got != tt.wantOpenCodeUsage {
				t.Errorf("usage %+v", a.Usage)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

func TestAnalyzeOutputReadError(t *testing.T) {
	for _, r := range []io.Reader{failingReader{}, io.MultiReader(strings.NewReader(strings.Repeat("x", sniffSize+1)), failingReader{})} {
		if _, err := analyzeOutput(r, analyze.Options{}); err == nil || !strings.Contains(err.Error(), "disk gone") {
			t.Errorf("err = %v", err)
		}
	}
}
