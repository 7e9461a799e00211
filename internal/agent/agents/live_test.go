package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ralph/internal/agent"
)

// live feeds lines to the live parser of agent name, as the Runner does.
func live(t *testing.T, name, dir string, lines [][]byte) []agent.LiveEvent {
	t.Helper()
	var evs []agent.LiveEvent
	p := LiveParser(name, dir, func(e agent.LiveEvent) { evs = append(evs, e) })
	if p == nil {
		t.Fatalf("no live parser for %s", name)
	}
	for _, l := range lines {
		p(bytes.TrimRight(l, "\r\n"))
	}
	return evs
}

func sampleLines(t *testing.T, name, sample string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", name, "testdata", sample))
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(bytes.Lines(b))
}

// The live view of the verbatim outputs of the real CLIs: prose, tool
// calls with their file or command, errors once; never tool output,
// prompts, summaries or routine notices.
func TestLiveSamples(t *testing.T) {
	text := func(s string) agent.LiveEvent { return agent.LiveEvent{Kind: agent.LiveText, Text: s} }
	tool := func(name, target string) agent.LiveEvent {
		return agent.LiveEvent{Kind: agent.LiveTool, Tool: name, Target: target}
	}
	fail := func(s string) agent.LiveEvent { return agent.LiveEvent{Kind: agent.LiveError, Text: s} }
	const metadataNotice = "Model metadata for `%s` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."
	const done = "Done.\n---STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END---"
	tests := []struct {
		agent, sample, dir string
		want               []agent.LiveEvent
	}{
		// File targets are relative to the cwd of the init event.
		{"claude", "claude_stream_json_tools.jsonl", "", []agent.LiveEvent{
			text("I'll create the file."), tool("Write", "hello.txt"), tool("Bash", "echo hi && cat hello.txt"), text(done)}},
		// A rate limit event names the reset; the limit's message arrives
		// as text and again as the result, shown once.
		{"claude", "claude_stream_json_5h_limit_oauth.jsonl", "", []agent.LiveEvent{
			fail("rate limit five_hour: rejected, resets 2026-11-21 00:00 UTC"),
			text("You've hit your 5-hour limit · resets 12am (UTC)")}},
		// The json output is one result: refused tools, then the answer.
		{"claude", "claude_json_permission_denied.json", "/tmp/agentcli/proj", []agent.LiveEvent{
			fail("permission denied: Write hello.txt"), text(done)}},
		// No result key: the errors list says what happened.
		{"claude", "claude_json_error_max_turns.json", "", []agent.LiveEvent{fail("Reached maximum number of turns (1)")}},
		// A command is shown once, when it starts, without its shell wrapper.
		{"codex", "codex_exec_json_tools.jsonl", "", []agent.LiveEvent{
			fail(strings.Replace(metadataNotice, "%s", "gpt-5.1-codex", 1)), text("Running a command."),
			tool("Shell", "echo hi > hello_codex.txt && cat hello_codex.txt"), text(done)}},
		// The error event and turn.failed carry the same message: shown once.
		{"codex", "codex_exec_json_usage_limit.jsonl", "", []agent.LiveEvent{
			fail(strings.Replace(metadataNotice, "%s", "fake-model", 1)),
			fail("You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at Nov 21st, 2026 1:05 AM.")}},
		// Streamed text is shown once something else happens.
		{"gemini", "gemini_stream_json_tools.jsonl", "/tmp/agentcli/proj", []agent.LiveEvent{
			text("Creating file."), tool("write_file", "hello_gemini.txt"),
			tool("run_shell_command", "echo hi && cat hello_gemini.txt"), text(done)}},
		{"gemini", "gemini_stream_json_429.jsonl", "", []agent.LiveEvent{
			fail("[API Error: You exceeded your current quota, please check your plan and billing details. Please retry in 20.5s.\n" +
				"Suggested retry after 20s.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method")}},
		{"opencode", "opencode_run_json_write_bash_success.jsonl", "/tmp/ralph-e2e/001", []agent.LiveEvent{
			text("I'll create the file."), tool("write", "hello.txt"), tool("bash", "cat hello.txt"),
			text("Done.\n\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---")}},
		{"opencode", "opencode_run_json_401_error.jsonl", "/tmp/ralph-e2e/001", []agent.LiveEvent{fail("invalid x-api-key")}},
		{"opencode", "opencode_json_failures.jsonl", "/tmp/agentcli/proj", []agent.LiveEvent{
			tool("bash", "go test ./..."), fail("permission denied: edit /etc/hosts"), tool("read", "missing.go"),
			text("The test fails and I may not edit /etc/hosts. Should I change the expected value instead?")}},
		{"opencode", "opencode_json_429.jsonl", "/tmp/agentcli/proj", []agent.LiveEvent{fail("Rate limit reached for requests")}},
	}
	for _, tt := range tests {
		t.Run(tt.agent+"/"+tt.sample, func(t *testing.T) {
			if got := live(t, tt.agent, tt.dir, sampleLines(t, tt.agent, tt.sample)); !slices.Equal(got, tt.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestLiveLines pins single events of each agent's live view, with the
// project in /proj.
func TestLiveLines(t *testing.T) {
	long := strings.Repeat("x", 200)
	msg := func(s string) string {
		return `{"type":"message","role":"assistant","content":"` + s + `","delta":true}`
	}
	claudeTool := func(name, input string) string {
		return `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"` + name + `","input":` + input + `}]}}`
	}
	ev := func(kind agent.LiveKind, s string) []agent.LiveEvent { return []agent.LiveEvent{{Kind: kind, Text: s}} }
	tool := func(name, target string) []agent.LiveEvent {
		return []agent.LiveEvent{{Kind: agent.LiveTool, Tool: name, Target: target}}
	}
	tests := []struct {
		agent, name string
		lines       []string
		want        []agent.LiveEvent
	}{
		{"claude", "plain text", []string{"Working on it"}, ev(agent.LiveOutput, "Working on it")},
		{"claude", "blank", []string{"   "}, nil},
		{"claude", "cut json", []string{`{"type":"assistant","message":{"content":[{"type":"text","text":"abc`}, nil},
		{"claude", "tool result hidden", []string{`{"type":"user","message":{"content":[{"type":"tool_result","content":"---RALPH_STATUS---"}]}}`}, nil},
		{"claude", "routine rate limit hidden", []string{`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}`}, nil},
		{"claude", "string content", []string{`{"type":"assistant","message":{"content":"hello"}}`}, ev(agent.LiveText, "hello")},
		{"claude", "read outside the project", []string{claudeTool("Read", `{"file_path":"/etc/hosts"}`)}, tool("Read", "/etc/hosts")},
		{"claude", "read inside the project", []string{claudeTool("Read", `{"file_path":"/proj/PROMPT.md"}`)}, tool("Read", "PROMPT.md")},
		{"claude", "long command", []string{claudeTool("Bash", `{"command":"echo `+long+`"}`)}, tool("Bash", "echo "+long[:74]+"…")},
		{"claude", "grep with path", []string{claudeTool("Grep", `{"pattern":"TODO","path":"/proj/src"}`)}, tool("Grep", "TODO in src")},
		{"claude", "todos", []string{claudeTool("TodoWrite", `{"todos":[{},{}]}`)}, tool("TodoWrite", "2 todos")},
		{"claude", "unknown input", []string{claudeTool("Mystery", `{"x":1}`)}, tool("Mystery", "")},
		{"claude", "error without text", []string{`{"type":"result","subtype":"error_during_execution","is_error":true}`},
			ev(agent.LiveError, "the agent reported an error (error_during_execution)")},
		{"claude", "summary hidden", []string{`{"type":"result","subtype":"success","is_error":false,"result":"","num_turns":2}`}, nil},

		{"codex", "text output", []string{"Working on it", "  "}, ev(agent.LiveOutput, "Working on it")},
		{"codex", "command output and usage hidden", []string{
			`{"type":"thread.started","thread_id":"t1"}`,
			`{"type":"item.completed","item":{"id":"i7","type":"command_execution","command":"bash -lc 'cat PROMPT.md'","aggregated_output":"---RALPH_STATUS---","exit_code":1}}`,
			`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}`}, tool("Shell", "cat PROMPT.md")},
		{"codex", "file changes relative to the project", []string{`{"type":"item.completed","item":{"id":"i2","type":"file_change","changes":[{"path":"/proj/a.go","kind":"update"}],"status":"completed"}}`},
			tool("Edit", "a.go")},
		{"codex", "turn failed alone", []string{`{"type":"turn.started"}`, `{"type":"turn.failed","error":{"message":"stream disconnected"}}`},
			ev(agent.LiveError, "stream disconnected")},

		{"gemini", "chunks join into one text", []string{msg("Hel"), msg("lo wor"), msg("ld.\\nNext"), msg(" line"), `{"type":"result","status":"success","stats":{"input_tokens":1}}`},
			ev(agent.LiveText, "Hello world.\nNext line")},
		{"gemini", "prompt and tool result hidden", []string{
			`{"type":"init","session_id":"s","model":"m"}`,
			`{"type":"message","role":"user","content":"the prompt"}`,
			`{"type":"tool_use","tool_name":"read_file","parameters":{"absolute_path":"/proj/src/a.go"}}`,
			`{"type":"tool_result","tool_id":"t","status":"success","output":"---RALPH_STATUS---"}`}, tool("read_file", "src/a.go")},
		{"gemini", "errors once", []string{
			`{"type":"init","session_id":"s","model":"m"}`,
			`{"type":"error","severity":"error","message":"Maximum session turns exceeded"}`,
			`{"type":"result","status":"error","error":{"type":"x","message":"Maximum session turns exceeded"},"stats":{}}`},
			ev(agent.LiveError, "Maximum session turns exceeded")},
		{"gemini", "text output", []string{"Plain answer", ""}, ev(agent.LiveOutput, "Plain answer")},

		{"opencode", "text output", []string{"Plain answer"}, ev(agent.LiveOutput, "Plain answer")},
		{"opencode", "blank", []string{" "}, nil},
		{"opencode", "cut", []string{`{"type":"text","part":{"text":"ab`}, nil},
		{"opencode", "steps and reasoning hidden", []string{`{"type":"reasoning","part":{"type":"reasoning","text":"hmm"}}`,
			`{"type":"step_finish","part":{"reason":"stop","tokens":{"input":10},"cost":0.1}}`}, nil},
		{"opencode", "grep with path", []string{`{"type":"tool_use","part":{"tool":"grep","state":{"status":"completed","input":{"pattern":"TODO","path":"/proj/src"}}}}`},
			tool("grep", "TODO in src")},
		{"opencode", "refused command", []string{`{"type":"tool_use","part":{"tool":"bash","state":{"status":"error","input":{"command":"rm -rf build"},"error":"The user rejected permission to use this specific tool call."}}}`},
			ev(agent.LiveError, "permission denied: bash rm -rf build")},
		{"opencode", "error without message", []string{`{"type":"error","error":{"name":"ProviderAuthError","data":{"providerID":"x"}}}`},
			ev(agent.LiveError, "ProviderAuthError")},

		{"command", "every line as it is", []string{"  Working", `{"type":"text"}`}, []agent.LiveEvent{
			{Kind: agent.LiveOutput, Text: "  Working"}, {Kind: agent.LiveOutput, Text: `{"type":"text"}`}}},
	}
	if LiveParser("aider", "", func(agent.LiveEvent) {}) != nil {
		t.Error("unknown agent has a live parser")
	}
	for _, tt := range tests {
		t.Run(tt.agent+"/"+tt.name, func(t *testing.T) {
			var lines [][]byte
			for _, l := range tt.lines {
				lines = append(lines, []byte(l))
			}
			if got := live(t, tt.agent, "/proj", lines); !slices.Equal(got, tt.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
