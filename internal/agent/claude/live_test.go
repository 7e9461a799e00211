package claude

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

func collect(transcript []byte, dir string) []agent.LiveEvent {
	var evs []agent.LiveEvent
	ParseLive(transcript, dir, func(e agent.LiveEvent) { evs = append(evs, e) })
	return evs
}

func TestLiveToolsSample(t *testing.T) {
	// The verbatim stream of a real Claude Code 2.1.329 run.
	evs := collect(readSample(t, "claude_stream_json_tools.jsonl"), "")
	want := []agent.LiveEvent{
		{Kind: agent.LiveText, Text: "I'll create the file."},
		// Relative to the cwd of the init event.
		{Kind: agent.LiveTool, Tool: "Write", Target: "hello.txt"},
		{Kind: agent.LiveTool, Tool: "Bash", Target: "echo hi && cat hello.txt"},
		{Kind: agent.LiveText, Text: "Done.\n---STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END---"},
	}
	if !slices.Equal(evs, want) {
		t.Errorf("events\n got %+v\nwant %+v", evs, want)
	}

	var b strings.Builder
	render := agent.RenderLive(&b)
	for _, e := range evs {
		render(e)
	}
	wantText := "I'll create the file.\n" +
		"⚡ Write hello.txt\n" +
		"⚡ Bash echo hi && cat hello.txt\n" +
		"Done.\n---STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END---\n"
	if b.String() != wantText {
		t.Errorf("rendered\n%s\nwant\n%s", b.String(), wantText)
	}
}

func TestLiveErrors(t *testing.T) {
	tests := []struct {
		sample, dir string
		want        []agent.LiveEvent
	}{
		// The limit message arrives as text and again as the result: shown once.
		{"claude_stream_json_5h_limit_oauth.jsonl", "", []agent.LiveEvent{
			{Kind: agent.LiveText, Text: "You've hit your 5-hour limit · resets 12am (UTC)"},
		}},
		{"claude_json_permission_denied.json", "/tmp/agentcli/proj", []agent.LiveEvent{
			{Kind: agent.LiveError, Text: "permission denied: Write hello.txt"},
		}},
		// No result key: the errors list says what happened.
		{"claude_json_error_max_turns.json", "", []agent.LiveEvent{
			{Kind: agent.LiveError, Text: "Reached maximum number of turns (1)"},
		}},
	}
	for _, tt := range tests {
		if got := collect(readSample(t, tt.sample), tt.dir); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.sample, got, tt.want)
		}
	}
}

func TestLiveLines(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		name, line string
		want       []agent.LiveEvent
	}{
		{"plain text", "Working on it", []agent.LiveEvent{{Kind: agent.LiveOutput, Text: "Working on it"}}},
		{"blank", "   ", nil},
		{"cut json", `{"type":"assistant","message":{"content":[{"type":"text","text":"abc`, nil},
		{"tool result ignored", `{"type":"user","message":{"content":[{"type":"tool_result","content":"---RALPH_STATUS---"}]}}`, nil},
		{"rate limit event ignored", `{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}`, nil},
		{"string content", `{"type":"assistant","message":{"content":"hello"}}`, []agent.LiveEvent{{Kind: agent.LiveText, Text: "hello"}}},
		{"read absolute outside dir", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"/etc/hosts"}}]}}`,
			[]agent.LiveEvent{{Kind: agent.LiveTool, Tool: "Read", Target: "/etc/hosts"}}},
		{"read inside dir", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"/proj/PROMPT.md"}}]}}`,
			[]agent.LiveEvent{{Kind: agent.LiveTool, Tool: "Read", Target: "PROMPT.md"}}},
		{"bash long", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"echo ` + long + `"}}]}}`,
			[]agent.LiveEvent{{Kind: agent.LiveTool, Tool: "Bash", Target: agent.ShortTarget("echo " + long)}}},
		{"grep with path", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Grep","input":{"pattern":"TODO","path":"/proj/src"}}]}}`,
			[]agent.LiveEvent{{Kind: agent.LiveTool, Tool: "Grep", Target: "TODO in src"}}},
		{"todos", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"TodoWrite","input":{"todos":[{},{}]}}]}}`,
			[]agent.LiveEvent{{Kind: agent.LiveTool, Tool: "TodoWrite", Target: "2 todos"}}},
		{"unknown input", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Mystery","input":{"x":1}}]}}`,
			[]agent.LiveEvent{{Kind: agent.LiveTool, Tool: "Mystery"}}},
		{"error without text", `{"type":"result","subtype":"error_during_execution","is_error":true}`,
			[]agent.LiveEvent{{Kind: agent.LiveError, Text: "the agent reported an error (error_during_execution)"}}},
	}
	for _, tt := range tests {
		var got []agent.LiveEvent
		p := newLiveParser("/proj", func(e agent.LiveEvent) { got = append(got, e) })
		p.line([]byte(tt.line))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

// TestLiveParserExported: the exported line parser is the one Run uses,
// and ParseLive over a whole transcript gives the same events.
func TestLiveParserExported(t *testing.T) {
	sample := readSample(t, "claude_stream_json_tools.jsonl")
	var got []agent.LiveEvent
	line := LiveParser("", func(e agent.LiveEvent) { got = append(got, e) })
	for l := range bytes.Lines(sample) {
		line(bytes.TrimRight(l, "\n"))
	}
	if want := collect(sample, ""); len(want) != 4 || !slices.Equal(got, want) {
		t.Errorf("LiveParser events\n got %+v\nwant %+v", got, want)
	}
}
