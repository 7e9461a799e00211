package gemini

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
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

func parse(lines []byte, dir string) []agent.LiveEvent {
	var evs []agent.LiveEvent
	line := LiveParser(dir, func(e agent.LiveEvent) { evs = append(evs, e) })
	for l := range bytes.Lines(lines) {
		line(bytes.TrimRight(l, "\n"))
	}
	return evs
}

func TestLiveSamples(t *testing.T) {
	tests := []struct {
		sample, dir string
		want        []agent.LiveEvent
	}{
		{"gemini_stream_json_tools.jsonl", "/tmp/agentcli/proj", []agent.LiveEvent{
			{Kind: agent.LiveText, Text: "Creating file."},
			{Kind: agent.LiveTool, Tool: "write_file", Target: "hello_gemini.txt"},
			{Kind: agent.LiveTool, Tool: "run_shell_command", Target: "echo hi && cat hello_gemini.txt"},
			// Streamed text is shown once something else happens.
			{Kind: agent.LiveText, Text: "Done.\n---STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END---"},
		}},
		{"gemini_stream_json_429.jsonl", "", []agent.LiveEvent{
			{Kind: agent.LiveError, Text: "[API Error: You exceeded your current quota, please check your plan and billing details. Please retry in 20.5s.\n" +
				"Suggested retry after 20s.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method"},
		}},
	}
	for _, tt := range tests {
		if got := parse(readSample(t, tt.sample), tt.dir); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.sample, got, tt.want)
		}
	}
	var b bytes.Buffer
	render := agent.RenderLive(&b)
	for _, e := range parse(readSample(t, "gemini_stream_json_tools.jsonl"), "/tmp/agentcli/proj") {
		render(e)
	}
	want := "Creating file.\n⚡ write_file hello_gemini.txt\n⚡ run_shell_command echo hi && cat hello_gemini.txt\n" +
		"Done.\n---STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END---\n"
	if b.String() != want {
		t.Errorf("rendered\n%s\nwant\n%s", b.String(), want)
	}
}

// TestLiveLines pins what the live view adds to the log renderer it is
// built on: the prompt, tool results and the closing summary stay out.
func TestLiveLines(t *testing.T) {
	msg := func(s string) string {
		return `{"type":"message","role":"assistant","content":"` + s + `","delta":true}`
	}
	tests := []struct {
		name  string
		lines []string
		want  []agent.LiveEvent
	}{
		{"chunks join into one text", []string{msg("Hel"), msg("lo wor"), msg("ld.\\nNext"), msg(" line"), `{"type":"result","status":"success","stats":{"input_tokens":1}}`},
			[]agent.LiveEvent{{Kind: agent.LiveText, Text: "Hello world.\nNext line"}}},
		{"prompt and tool result hidden", []string{
			`{"type":"init","session_id":"s","model":"m"}`,
			`{"type":"message","role":"user","content":"the prompt"}`,
			`{"type":"tool_use","tool_name":"read_file","parameters":{"absolute_path":"/proj/src/a.go"}}`,
			`{"type":"tool_result","tool_id":"t","status":"success","output":"---RALPH_STATUS---"}`},
			[]agent.LiveEvent{{Kind: agent.LiveTool, Tool: "read_file", Target: "src/a.go"}}},
		{"errors once", []string{
			`{"type":"init","session_id":"s","model":"m"}`,
			`{"type":"error","severity":"error","message":"Maximum session turns exceeded"}`,
			`{"type":"result","status":"error","error":{"type":"x","message":"Maximum session turns exceeded"},"stats":{}}`},
			[]agent.LiveEvent{{Kind: agent.LiveError, Text: "Maximum session turns exceeded"}}},
		{"text output", []string{"Plain answer", ""}, []agent.LiveEvent{{Kind: agent.LiveOutput, Text: "Plain answer"}}},
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
