package opencode

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/analyze"
)

func normalizeWith(t *testing.T, stdout, stderr []byte, exit int) *analyze.Analysis {
	t.Helper()
	an, err := Normalize(bytes.NewReader(stdout), analyze.Options{Stderr: stderr, ExitCode: exit, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return an
}

func asJSON(t *testing.T, an *analyze.Analysis) string {
	t.Helper()
	b, err := json.Marshal(an)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNormalizeIgnoresLog: the real run with --print-logs reads exactly as
// it does without its log, even when the log holds a request that failed
// at a quota and was retried: the analyzer alone would take that line for
// a usage limit.
func TestNormalizeIgnoresLog(t *testing.T) {
	stdout := agenttest.Sample(t, "opencode_run_print_logs_success.jsonl")
	logs := agenttest.Sample(t, "opencode_run_print_logs_success.stderr")
	quota := strings.Replace(logLine(t, "stream error"), recordedLimit, "Resource has been exhausted (e.g. check quota). RESOURCE_EXHAUSTED", 1)
	retried := append(append(slices.Clip(logs), quota...), '\n')

	want := asJSON(t, normalizeWith(t, stdout, nil, 0))
	for name, stderr := range map[string][]byte{"log": logs, "log with a retried quota error": retried} {
		if got := asJSON(t, normalizeWith(t, stdout, stderr, 0)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	an := normalizeWith(t, stdout, logs, 0)
	if an.Status != analyze.StatusComplete || an.IsError || len(an.Errors) > 0 || an.UsageLimit.Detected || an.SessionID == "" {
		t.Errorf("analysis %s", want)
	}
	if raw, _ := analyze.Analyze(bytes.NewReader(nil), analyze.Options{Stderr: retried, Now: fixedNow}); !raw.UsageLimit.Detected {
		t.Error("the analyzer no longer misreads the retried quota error: is the filter still needed?")
	}

	// What is not OpenCode's log is read as before.
	mixed := append(slices.Clip(logs), "Error: connection refused\n"...)
	if an := normalizeWith(t, stdout, mixed, 0); !slices.Contains(an.Errors, "Error: connection refused") {
		t.Errorf("errors %q", an.Errors)
	}
}

// TestNormalizeStoppedAtLimit: the line ralph adds when it stops the call
// makes a usage limit, with the reset when the provider's message names
// one; a 429 event on stdout says more and wins.
func TestNormalizeStoppedAtLimit(t *testing.T) {
	logs := agenttest.Sample(t, "opencode_run_print_logs_429.stderr")
	marked := func(msg string) []byte {
		return append(slices.Clip(logs), "\n"+limitMarker+msg+"\n"...)
	}
	tests := []struct {
		name      string
		stdout    []byte
		stderr    []byte
		want      analyze.UsageLimit
		noResetOK bool // the "without a reset time" warning is expected
	}{
		{"recorded message", nil, marked(recordedLimit),
			analyze.UsageLimit{Detected: true, Kind: analyze.LimitUnknown, Message: recordedLimit}, true},
		{"message naming the reset", nil, marked("You exceeded your current quota, please try again in 20 minutes."),
			analyze.UsageLimit{Detected: true, Kind: analyze.LimitUnknown, ResetsAt: fixedNow.Add(20 * time.Minute).Format(time.RFC3339),
				Message: "You exceeded your current quota, please try again in 20 minutes."}, false},
		{"a 429 event wins", agenttest.Sample(t, "opencode_json_429.jsonl"), marked(recordedLimit),
			analyze.UsageLimit{Detected: true, Kind: analyze.LimitUnknown, ResetsAt: fixedNow.Add(30 * time.Minute).Format(time.RFC3339),
				Message: "Rate limit reached for requests"}, false},
		{"log alone is no limit", nil, logs, analyze.UsageLimit{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			an := normalizeWith(t, tt.stdout, tt.stderr, 143)
			if an.UsageLimit != tt.want {
				t.Errorf("usage limit\n got %+v\nwant %+v", an.UsageLimit, tt.want)
			}
			if got := slices.Contains(an.Warnings, "usage limit without a reset time"); got != tt.noResetOK {
				t.Errorf("warnings %q", an.Warnings)
			}
			if slices.ContainsFunc(an.Errors, func(e string) bool { return strings.Contains(e, "ralph:") }) {
				t.Errorf("ralph's note read as the agent's error: %q", an.Errors)
			}
		})
	}
}
