package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ralph/internal/agent"
)

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parse(transcript []byte, dir string) []agent.LiveEvent {
	var evs []agent.LiveEvent
	line := LiveParser(dir, func(e agent.LiveEvent) { evs = append(evs, e) })
	for l := range bytes.Lines(transcript) {
		line(bytes.TrimRight(l, "\n"))
	}
	return evs
}

const metadataNotice = "Model metadata for `%s` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."

func TestLiveSamples(t *testing.T) {
	limit := "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at Nov 21st, 2026 1:05 AM."
	tests := []struct {
		sample string
		want   []agent.LiveEvent
	}{
		{"codex_exec_json_tools.jsonl", []agent.LiveEvent{
			{Kind: agent.LiveError, Text: strings.Replace(metadataNotice, "%s", "gpt-5.1-codex", 1)},
			{Kind: agent.LiveText, Text: "Running a command."},
			// Shown once, when it starts, without the shell wrapper; its
			// output ("hi") is not shown.
			{Kind: agent.LiveTool, Tool: "Shell", Target: "echo hi > hello_codex.txt && cat hello_codex.txt"},
			{Kind: agent.LiveText, Text: "Done.\n---STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END---"},
		}},
		// The error event and turn.failed carry the same message: shown once.
		{"codex_exec_json_usage_limit.jsonl", []agent.LiveEvent{
			{Kind: agent.LiveError, Text: strings.Replace(metadataNotice, "%s", "fake-model", 1)},
			{Kind: agent.LiveError, Text: limit},
		}},
	}
	for _, tt := range tests {
		if got := parse(readSample(t, tt.sample), ""); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.sample, got, tt.want)
		}
	}
}

// TestLiveLines pins what the live view adds to the log renderer it is
// built on: tool output and turn summaries stay out, text output shows.
func TestLiveLines(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []agent.LiveEvent
	}{
		{"text output", []string{"Working on it", "  "}, []agent.LiveEvent{{Kind: agent.LiveOutput, Text: "Working on it"}}},
		{"command output and usage hidden", []string{
			`{"type":"thread.started","thread_id":"t1"}`,
			`{"type":"item.completed","item":{"id":"i7","type":"command_execution","command":"bash -lc 'cat PROMPT.md'","aggregated_output":"---RALPH_STATUS---","exit_code":1}}`,
			`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}`},
			[]agent.LiveEvent{{Kind: agent.LiveTool, Tool: "Shell", Target: "cat PROMPT.md"}}},
		{"file changes relative to the project", []string{`{"type":"item.completed","item":{"id":"i2","type":"file_change","changes":[{"path":"/proj/a.go","kind":"update"}],"status":"completed"}}`},
			[]agent.LiveEvent{{Kind: agent.LiveTool, Tool: "Edit", Target: "a.go"}}},
		{"turn failed alone", []string{`{"type":"turn.started"}`, `{"type":"turn.failed","error":{"message":"stream disconnected"}}`},
			[]agent.LiveEvent{{Kind: agent.LiveError, Text: "stream disconnected"}}},
	}
	for _, tt := range tests {
		var got []agent.LiveEvent
		line := LiveParser("/proj", func(e agent.LiveEvent) { got = append(got, e) })
		for _, l := range tt.lines {
			line([]byte(l))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}
