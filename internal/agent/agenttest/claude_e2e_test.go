package agenttest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/fakeapi"
)

// These tests run the real Claude Code CLI against the fake model API. They
// pin down what ralph relies on: output shapes, session resume, permission
// denials, and how usage limits are reported.

const (
	claudeTimeout = 45 * time.Second
	statusText    = "Done.\n\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---"
	fileContent   = "hello from the fake model\n"
)

// writeAndBash is an iteration that writes hello.txt in dir, reads it back
// with Bash, and ends with a status block.
func writeAndBash(dir string) fakeapi.Iteration {
	return fakeapi.Iteration{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("I'll create the file.", "Write",
			map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": fileContent}),
		fakeapi.ToolTurn("", "Bash", map[string]string{"command": "cat hello.txt", "description": "Show the file"}),
		fakeapi.TextTurn(statusText),
	}}
}

// result is the part of Claude Code's result object the tests check.
type result struct {
	Type              string  `json:"type"`
	Subtype           string  `json:"subtype"`
	IsError           bool    `json:"is_error"`
	Result            *string `json:"result"`
	SessionID         string  `json:"session_id"`
	NumTurns          int     `json:"num_turns"`
	APIErrorStatus    *int    `json:"api_error_status"`
	APIError          string  `json:"api_error"`
	PermissionDenials []struct {
		ToolName  string         `json:"tool_name"`
		ToolUseID string         `json:"tool_use_id"`
		ToolInput map[string]any `json:"tool_input"`
	} `json:"permission_denials"`
	Usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func (r result) text() string {
	if r.Result == nil {
		return "<no result>"
	}
	return *r.Result
}

// parseResult requires stdout to be exactly one JSON object.
func parseResult(t *testing.T, stdout []byte) result {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(stdout))
	var r result
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	if r.Type != "result" || r.SessionID == "" {
		t.Fatalf("not a result with a session id:\n%s", stdout)
	}
	return r
}

// event is one line of stream-json output.
type event struct {
	raw           []byte
	Type          string          `json:"type"`
	Subtype       string          `json:"subtype"`
	SessionID     string          `json:"session_id"`
	Message       json.RawMessage `json:"message"`
	RateLimitInfo *struct {
		Status        string `json:"status"`
		ResetsAt      int64  `json:"resetsAt"`
		RateLimitType string `json:"rateLimitType"`
	} `json:"rate_limit_info"`
}

// parseStream requires every stdout line to be a JSON object and the last
// one to be the result.
func parseStream(t *testing.T, stdout []byte) ([]event, result) {
	t.Helper()
	events := jsonLines(t, stdout, func(e *event, raw []byte) { e.raw = raw })
	if len(events) < 2 || events[0].Type != "system" || events[0].Subtype != "init" {
		t.Fatalf("stream does not start with system/init:\n%s", stdout)
	}
	return events, parseResult(t, events[len(events)-1].raw)
}

// blocks lists "type:name" of the content blocks in assistant/user events.
func blocks(t *testing.T, events []event) []string {
	t.Helper()
	var out []string
	for _, e := range events {
		if e.Type != "assistant" && e.Type != "user" {
			continue
		}
		var m struct {
			Content []struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"content"`
		}
		if err := json.Unmarshal(e.Message, &m); err != nil {
			t.Fatalf("%s event message: %v", e.Type, err)
		}
		for _, c := range m.Content {
			out = append(out, e.Type+":"+strings.TrimSuffix(c.Type+":"+c.Name, ":"))
		}
	}
	return out
}

func noProblems(t *testing.T, fake *fakeapi.Server) {
	t.Helper()
	if p := fake.Problems(); len(p) > 0 {
		t.Errorf("fake could not answer: %q", p)
	}
}

func TestClaudeJSONWriteAndBash(t *testing.T) {
	bin := ClaudeBinary(t)
	dir := t.TempDir()
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{writeAndBash(dir)}})

	res := Run(t, dir, ClaudeEnv(t, fake.URL), claudeTimeout, bin,
		"-p", "create hello.txt", "--output-format", "json", "--allowedTools", "Write,Bash")
	succeeded(t, res)
	r := parseResult(t, res.Stdout)
	if r.IsError || r.Subtype != "success" || r.text() != statusText || r.NumTurns != 3 || len(r.PermissionDenials) != 0 {
		t.Errorf("result = %+v (%q)", r, r.text())
	}
	if r.Usage.InputTokens == 0 || r.Usage.OutputTokens == 0 {
		t.Errorf("usage not reported: %+v", r.Usage)
	}
	wroteHello(t, dir)

	reqs := fake.MessageRequests()
	if len(reqs) != 3 {
		t.Fatalf("fake saw %d message requests, want 3", len(reqs))
	}
	for i, rq := range reqs {
		if rq.Iteration != 0 || rq.Turn != i || rq.Query != "beta=true" || !rq.Messages.Stream {
			t.Errorf("request %d: iteration %d turn %d query %q stream %v", i, rq.Iteration, rq.Turn, rq.Query, rq.Messages.Stream)
		}
		if rq.Header.Get("X-Api-Key") != "dummy" || rq.Header.Get("X-Claude-Code-Session-Id") != r.SessionID {
			t.Errorf("request %d headers: %v", i, rq.Header)
		}
	}
	toolsRan(t, reqs, "Write", "Bash")
	noProblems(t, fake)
	saveFixture(t, "claude_json_write_bash_success.json", res.Stdout, dir, fake.URL)
}

func TestClaudeStreamJSONWriteAndBash(t *testing.T) {
	bin := ClaudeBinary(t)
	dir := t.TempDir()
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{writeAndBash(dir)}})

	res := Run(t, dir, ClaudeEnv(t, fake.URL), claudeTimeout, bin,
		"-p", "create hello.txt", "--output-format", "stream-json", "--verbose", "--allowedTools", "Write,Bash")
	succeeded(t, res)
	events, r := parseStream(t, res.Stdout)
	if r.IsError || r.text() != statusText || r.SessionID != events[0].SessionID {
		t.Errorf("result = %+v (%q), init session %s", r, r.text(), events[0].SessionID)
	}
	want := []string{
		"assistant:text", "assistant:tool_use:Write", "user:tool_result",
		"assistant:tool_use:Bash", "user:tool_result", "assistant:text",
	}
	if got := blocks(t, events); !slices.Equal(got, want) {
		t.Errorf("content blocks\n got %v\nwant %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); err != nil {
		t.Error(err)
	}
	noProblems(t, fake)
	saveFixture(t, "claude_stream_json_write_bash_success.jsonl", res.Stdout, dir, fake.URL)
}

func TestClaudeResumeSendsEarlierMessages(t *testing.T) {
	bin := ClaudeBinary(t)
	dir := t.TempDir()
	const resumed = "Nothing left to do.\n\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---"
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
		writeAndBash(dir),
		{Turns: []fakeapi.Turn{fakeapi.TextTurn(resumed)}},
	}})
	env := ClaudeEnv(t, fake.URL)

	first := Run(t, dir, env, claudeTimeout, bin,
		"-p", "create hello.txt", "--output-format", "json", "--allowedTools", "Write,Bash")
	if first.ExitCode != 0 {
		t.Fatalf("first run: exit %d\n%s\n%s", first.ExitCode, first.Stdout, first.Stderr)
	}
	sid := parseResult(t, first.Stdout).SessionID

	second := Run(t, dir, env, claudeTimeout, bin,
		"-p", "check the work", "--resume", sid, "--output-format", "json", "--allowedTools", "Write,Bash")
	if second.ExitCode != 0 {
		t.Fatalf("resumed run: exit %d\n%s\n%s", second.ExitCode, second.Stdout, second.Stderr)
	}
	r := parseResult(t, second.Stdout)
	if r.IsError || r.text() != resumed {
		t.Errorf("resumed result = %+v (%q)", r, r.text())
	}

	reqs := fake.MessageRequests()
	last := reqs[len(reqs)-1]
	if len(reqs) != 4 || last.Iteration != 1 || last.Turn != 0 {
		t.Fatalf("fake saw %d requests, last answered as iteration %d turn %d; want 4, 1, 0", len(reqs), last.Iteration, last.Turn)
	}
	prompts := last.Messages.Prompts()
	if len(prompts) != 2 || !strings.Contains(prompts[0], "create hello.txt") || !strings.Contains(prompts[1], "check the work") {
		t.Errorf("prompts in the resumed request = %q", prompts)
	}
	var toolUses []string
	for _, m := range last.Messages.Conversation() {
		for _, b := range m.Content.ToolUses() {
			toolUses = append(toolUses, b.Name)
		}
	}
	if !slices.Equal(toolUses, []string{"Write", "Bash"}) {
		t.Errorf("earlier tool calls in the resumed request = %v", toolUses)
	}
	if got := last.Messages.CountRole("assistant"); got != 3 {
		t.Errorf("resumed request carries %d assistant messages, want 3", got)
	}
	noProblems(t, fake)
	saveFixture(t, "claude_json_resumed_success.json", second.Stdout, dir, fake.URL)
}

func TestClaudeFreshSessionTakesNextIteration(t *testing.T) {
	bin := ClaudeBinary(t)
	dir := t.TempDir()
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{fakeapi.TextTurn("first call")}},
		{Turns: []fakeapi.Turn{fakeapi.TextTurn("second call")}},
	}})
	env := ClaudeEnv(t, fake.URL)
	var sessions []string
	for _, want := range []string{"first call", "second call"} {
		res := Run(t, dir, env, claudeTimeout, bin, "-p", "work", "--output-format", "json")
		r := parseResult(t, res.Stdout)
		if res.ExitCode != 0 || r.text() != want {
			t.Fatalf("exit %d, result %q, want %q", res.ExitCode, r.text(), want)
		}
		sessions = append(sessions, r.SessionID)
	}
	if sessions[0] == sessions[1] {
		t.Errorf("both calls ran in session %s", sessions[0])
	}
	noProblems(t, fake)
}

func TestClaudeWithoutPermissionDeniesWrite(t *testing.T) {
	bin := ClaudeBinary(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "hello.txt")
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("I'll create the file.", "Write", map[string]string{"file_path": target, "content": fileContent}),
		fakeapi.TextTurn(statusText),
	}}}})

	res := Run(t, dir, ClaudeEnv(t, fake.URL), claudeTimeout, bin,
		"-p", "create hello.txt", "--output-format", "json")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	r := parseResult(t, res.Stdout)
	if r.IsError || len(r.PermissionDenials) != 1 {
		t.Fatalf("result = %s", res.Stdout)
	}
	d := r.PermissionDenials[0]
	if d.ToolName != "Write" || d.ToolInput["file_path"] != target || d.ToolUseID == "" {
		t.Errorf("denial = %+v", d)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("denied Write still created the file (stat: %v)", err)
	}
	reqs := fake.MessageRequests()
	res2 := reqs[len(reqs)-1].Messages.Conversation()
	lastUser := res2[len(res2)-1].Content.ToolResults()
	if len(lastUser) != 1 || !lastUser[0].IsError {
		t.Errorf("model was not told the call failed: %+v", lastUser)
	}
	noProblems(t, fake)
	saveFixture(t, "claude_json_permission_denied_write.json", res.Stdout, dir, fake.URL)
}
