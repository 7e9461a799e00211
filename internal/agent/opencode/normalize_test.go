package opencode

import (
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/analyze"
)

var fixedNow = time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC)

func normalize(t *testing.T, input string, exit int) *analyze.Analysis {
	t.Helper()
	an, err := Normalize(strings.NewReader(input), analyze.Options{ExitCode: exit, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return an
}

// Outputs of the real OpenCode CLI (opencode_run_json_*) and, for cases no
// capture covers, transcripts built from its source (testdata/README.md).
func TestNormalizeSamples(t *testing.T) {
	tests := []struct {
		file  string
		exit  int
		check func(t *testing.T, an *analyze.Analysis)
	}{
		{"opencode_run_json_write_bash_success.jsonl", 0, func(t *testing.T, an *analyze.Analysis) {
			if an.Format != "stream-json" || an.SessionID != "ses_e043989d1ffek2IBBDyp5Qa9Om" || an.IsError ||
				an.Status != "COMPLETE" || !an.ExitSignal || !an.ExitSignalExplicit || an.Summary != "Done." {
				t.Errorf("analysis %+v", an)
			}
			// Three steps, summed, with their cost.
			if want := (analyze.Usage{InputTokens: 23219, OutputTokens: 68}); an.Usage.InputTokens != want.InputTokens ||
				an.Usage.OutputTokens != want.OutputTokens || an.Usage.CacheReadInputTokens != 0 || math.Abs(an.Usage.CostUSD-0.070677) > 1e-9 {
				t.Errorf("usage %+v, want %+v and $0.070677", an.Usage, want)
			}
			if an.ToolCalls != 2 || an.WorkType != "IMPLEMENTATION" || an.FilesModified != 1 ||
				len(an.Errors) != 0 || len(an.PermissionDenials) != 0 || len(an.Warnings) != 0 {
				t.Errorf("tool calls %d, work %s, files %d, errors %q, denials %+v, warnings %q",
					an.ToolCalls, an.WorkType, an.FilesModified, an.Errors, an.PermissionDenials, an.Warnings)
			}
		}},
		{"opencode_run_json_401_error.jsonl", 1, func(t *testing.T, an *analyze.Analysis) {
			if !an.IsError || !slices.Equal(an.Errors, []string{"invalid x-api-key"}) || an.SessionID != "ses_e0439b6acffe3LsVe5E6J6g2Vu" ||
				an.UsageLimit.Detected || an.Usage != (analyze.Usage{}) || an.Status != "UNKNOWN" {
				t.Errorf("analysis %+v", an)
			}
			// A rejected key is a setup failure: no retry fixes it.
			if f := an.SetupFailure; !f.Detected || f.Kind != analyze.SetupAuth || f.Message != "invalid x-api-key" {
				t.Errorf("setup failure %+v", f)
			}
		}},
		{"opencode_json_failures.jsonl", 0, func(t *testing.T, an *analyze.Analysis) {
			// The refused edit never ran: a denial, not a changed file.
			if !slices.Equal(an.PermissionDenials, []analyze.Denial{{Tool: "edit", Command: "/etc/hosts"}}) || an.FilesModified != -1 {
				t.Errorf("denials %+v, files modified %d", an.PermissionDenials, an.FilesModified)
			}
			for _, want := range []string{"--- FAIL: TestParse (0.00s)", "Error: File not found: /tmp/agentcli/proj/missing.go"} {
				if !slices.Contains(an.Errors, want) {
					t.Errorf("errors %q lack %q", an.Errors, want)
				}
			}
			if !an.AskingQuestions || an.Usage.CacheCreationInputTokens != 2048 || an.Usage.CostUSD != 0.0091 || an.ToolCalls != 2 {
				t.Errorf("analysis %+v", an)
			}
		}},
		{"opencode_json_429.jsonl", 1, func(t *testing.T, an *analyze.Analysis) {
			want := analyze.UsageLimit{Detected: true, Kind: "unknown", ResetsAt: "2026-11-21T02:30:00Z", Message: "Rate limit reached for requests"}
			if an.UsageLimit != want || !an.IsError || !slices.Equal(an.Errors, []string{"Rate limit reached for requests"}) {
				t.Errorf("limit %+v, is_error %v, errors %q", an.UsageLimit, an.IsError, an.Errors)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			in := agenttest.Sample(t, tt.file)
			an := normalize(t, string(in), tt.exit)
			if an.OutputBytes != int64(len(in)) {
				t.Errorf("output bytes %d, want %d", an.OutputBytes, len(in))
			}
			tt.check(t, an)
		})
	}
}

func TestNormalizeLines(t *testing.T) {
	const sid = `"sessionID":"ses_a"`
	tests := []struct {
		name  string
		input string
		check func(t *testing.T, an *analyze.Analysis)
	}{
		{"empty output", "", func(t *testing.T, an *analyze.Analysis) {
			if an.Format != "text" || an.SessionID != "" || an.IsError || an.ToolCalls != 0 {
				t.Errorf("%+v", an)
			}
		}},
		// The default format prints only the answer: analysed as text.
		{"text format", "All done.\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---\n", func(t *testing.T, an *analyze.Analysis) {
			if an.Format != "text" || an.Status != "COMPLETE" || !an.ExitSignal {
				t.Errorf("%+v", an)
			}
		}},
		{"status block in an earlier message still counts", `{"type":"text",` + sid + `,"part":{"type":"text","text":"---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---"}}` + "\n" +
			`{"type":"text",` + sid + `,"part":{"type":"text","text":"Bye."}}`, func(t *testing.T, an *analyze.Analysis) {
			if an.Status != "IN_PROGRESS" || an.Summary != "Bye." || an.SessionID != "ses_a" {
				t.Errorf("%+v", an)
			}
		}},
		{"tool output is not the agent's words", `{"type":"tool_use",` + sid + `,"part":{"type":"tool","tool":"read","state":{"status":"completed","input":{"filePath":"/p/PROMPT.md"},"output":"---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---"}}}`,
			func(t *testing.T, an *analyze.Analysis) {
				if an.Status != "UNKNOWN" || an.ExitSignal || an.ToolCalls != 1 {
					t.Errorf("%+v", an)
				}
			}},
		{"line too long is skipped", `{"type":"tool_use",` + sid + `,"part":{"type":"tool","tool":"read","state":{"status":"completed","output":"` +
			strings.Repeat("x", maxLine) + `"}}}` + "\n" + `{"type":"text",` + sid + `,"part":{"type":"text","text":"Read it."}}` + "\n",
			func(t *testing.T, an *analyze.Analysis) {
				if an.Summary != "Read it." || an.ToolCalls != 0 || an.OutputBytes < maxLine {
					t.Errorf("summary %q, tools %d, bytes %d", an.Summary, an.ToolCalls, an.OutputBytes)
				}
			}},
		{"cut last line", `{"type":"text",` + sid + `,"part":{"type":"text","text":"Working."}}` + "\n" + `{"type":"tool_use","sess`,
			func(t *testing.T, an *analyze.Analysis) {
				if an.SessionID != "ses_a" || an.Summary != "Working." {
					t.Errorf("%+v", an)
				}
			}},
		{"error without data", `{"type":"error",` + sid + `,"error":{"name":"UnknownError"}}`, func(t *testing.T, an *analyze.Analysis) {
			if !an.IsError || !slices.Equal(an.Errors, []string{"UnknownError"}) || an.UsageLimit.Detected {
				t.Errorf("%+v", an)
			}
		}},
		{"usage-limit wording in an error", `{"type":"error",` + sid + `,"error":{"name":"APIError","data":{"message":"You've hit your usage limit. Try again in 2 hours.","statusCode":400,"isRetryable":false}}}`,
			func(t *testing.T, an *analyze.Analysis) {
				if !an.UsageLimit.Detected || an.UsageLimit.ResetsAt != "2026-11-21T04:00:00Z" {
					t.Errorf("%+v", an.UsageLimit)
				}
			}},
		{"429 without retry-after", `{"type":"error",` + sid + `,"error":{"name":"APIError","data":{"message":"Too many requests","statusCode":429,"isRetryable":true}}}`,
			func(t *testing.T, an *analyze.Analysis) {
				if !an.UsageLimit.Detected || an.UsageLimit.ResetsAt != "" || !slices.Contains(an.Warnings, "usage limit without a reset time") {
					t.Errorf("%+v, warnings %q", an.UsageLimit, an.Warnings)
				}
			}},
		{"no usage without steps", `{"type":"text",` + sid + `,"part":{"type":"text","text":"Hi."}}`, func(t *testing.T, an *analyze.Analysis) {
			if an.Usage != (analyze.Usage{}) {
				t.Errorf("usage %+v", an.Usage)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, normalize(t, tt.input, 0)) })
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		headers map[string]string
		want    string
	}{
		{map[string]string{"retry-after": "120"}, "2026-11-21T02:02:00Z"},
		{map[string]string{"Retry-After": "1.5"}, "2026-11-21T02:00:01Z"},
		{map[string]string{"retry-after-ms": "90000", "retry-after": "5"}, "2026-11-21T02:01:30Z"},
		{map[string]string{"retry-after": "Sat, 21 Nov 2026 09:00:00 GMT"}, "2026-11-21T09:00:00Z"},
		{map[string]string{"retry-after": "soon"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		at, ok := retryAfter(tt.headers, fixedNow)
		got := ""
		if ok {
			got = at.UTC().Format(time.RFC3339)
		}
		if got != tt.want {
			t.Errorf("%v: %q, want %q", tt.headers, got, tt.want)
		}
	}
}

type brokenReader struct{}

func (brokenReader) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

func TestNormalizeReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"type":"text","part":{"text":"a"}}`+"\n"), brokenReader{})
	if _, err := Normalize(r, analyze.Options{}); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Errorf("err = %v", err)
	}
}
