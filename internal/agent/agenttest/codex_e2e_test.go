package agenttest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/fakeapi"
)

// These tests run the real Codex CLI (`codex exec --json`) against the
// fake's Responses API: its output shapes, its shell tool, and how it
// reports a usage limit.

const codexTimeout = 45 * time.Second

// codexEvent is one line of `codex exec --json`.
type codexEvent struct {
	raw      []byte
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Item     struct {
		ID               string `json:"id"`
		Type             string `json:"type"`
		Text             string `json:"text"`
		Message          string `json:"message"`
		Command          string `json:"command"`
		AggregatedOutput string `json:"aggregated_output"`
		ExitCode         *int   `json:"exit_code"`
		Status           string `json:"status"`
	} `json:"item"`
	Usage *struct {
		InputTokens       int `json:"input_tokens"`
		CachedInputTokens int `json:"cached_input_tokens"`
		OutputTokens      int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// parseCodex requires every stdout line to be a JSON object and the first
// one to start the thread.
func parseCodex(t *testing.T, stdout []byte) []codexEvent {
	t.Helper()
	events := jsonLines(t, stdout, func(e *codexEvent, raw []byte) { e.raw = raw })
	if len(events) < 2 || events[0].Type != "thread.started" || events[0].ThreadID == "" {
		t.Fatalf("stream does not start with thread.started:\n%s", stdout)
	}
	return events
}

// codexItems lists "type" of the completed items, "type:text" for messages.
func codexItems(events []codexEvent) []string {
	var out []string
	for _, e := range events {
		if e.Type != "item.completed" {
			continue
		}
		s := e.Item.Type
		if e.Item.Type == "agent_message" {
			s += ":" + e.Item.Text
		}
		out = append(out, s)
	}
	return out
}

func codexArgs(prompt string, extra ...string) []string {
	return append([]string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write"}, append(extra, prompt)...)
}

func TestCodexShellCreatesFile(t *testing.T) {
	bin := CodexBinary(t)
	t.Parallel()
	dir := t.TempDir()
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("I'll create the file.", "exec_command",
			map[string]string{"cmd": "printf 'hello from the fake model\\n' > hello.txt && cat hello.txt"}),
		fakeapi.TextTurn(statusText),
	}}}})

	res := Run(t, dir, CodexEnv(t, fake.URL), codexTimeout, bin, codexArgs("create hello.txt")...)
	succeeded(t, res)
	events := parseCodex(t, res.Stdout)
	want := []string{"agent_message:I'll create the file.", "command_execution", "agent_message:" + statusText}
	if got := codexItems(events); !slices.Equal(got, want) {
		t.Errorf("items\n got %q\nwant %q", got, want)
	}
	for _, e := range events {
		if e.Type == "item.completed" && e.Item.Type == "command_execution" &&
			(e.Item.ExitCode == nil || *e.Item.ExitCode != 0 || e.Item.AggregatedOutput != fileContent) {
			t.Errorf("command = %s", e.raw)
		}
	}
	last := events[len(events)-1]
	if last.Type != "turn.completed" || last.Usage == nil || last.Usage.InputTokens == 0 || last.Usage.OutputTokens == 0 {
		t.Errorf("last event = %s", last.raw)
	}
	wroteHello(t, dir)

	reqs := fake.RequestsTo("/v1/responses")
	if len(reqs) != 2 || reqs[0].Turn != 0 || reqs[1].Turn != 1 {
		t.Fatalf("fake saw %d requests, want turns 0 and 1", len(reqs))
	}
	if h := reqs[0].Header.Get("Authorization"); h != "Bearer dummy" {
		t.Errorf("Authorization = %q", h)
	}
	first := reqs[0].Messages
	if !first.Stream || first.Model != CodexModel || !slices.Contains(first.ToolNames(), "exec_command") {
		t.Errorf("first request: stream %v model %q tools %v", first.Stream, first.Model, first.ToolNames())
	}
	if p := first.Prompts(); len(p) != 1 || !strings.HasSuffix(p[0], "\ncreate hello.txt") {
		t.Errorf("prompts = %q", p)
	}
	// The command output reaching the model proves the tool really ran.
	if got := reqs[1].Messages.LastToolResult(); !strings.Contains(got, strings.TrimSpace(fileContent)) {
		t.Errorf("tool result seen by the model = %q", got)
	}
	noProblems(t, fake)
	saveTestdata(t, "codex_exec_json_shell_success.jsonl", res.Stdout, dir, fake.URL)
}

// TestCodexApplyPatchCreatesFile uses Codex's free-text apply_patch tool,
// answered as a custom_tool_call, which Codex reports as a file_change item.
func TestCodexApplyPatchCreatesFile(t *testing.T) {
	bin := CodexBinary(t)
	t.Parallel()
	dir := t.TempDir()
	patch := "*** Begin Patch\n*** Add File: hello.txt\n+" + strings.TrimSuffix(fileContent, "\n") + "\n*** End Patch\n"
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("I'll create the file.", "apply_patch", map[string]string{"input": patch}),
		fakeapi.TextTurn(statusText),
	}}}})

	res := Run(t, dir, CodexEnv(t, fake.URL), codexTimeout, bin, codexArgs("create hello.txt")...)
	succeeded(t, res)
	events := parseCodex(t, res.Stdout)
	want := []string{"agent_message:I'll create the file.", "file_change", "agent_message:" + statusText}
	if got := codexItems(events); !slices.Equal(got, want) {
		t.Errorf("items\n got %q\nwant %q", got, want)
	}
	if last := events[len(events)-1]; last.Type != "turn.completed" || last.Usage == nil {
		t.Errorf("last event = %s", last.raw)
	}
	wroteHello(t, dir)
	reqs := fake.RequestsTo("/v1/responses")
	if len(reqs) != 2 {
		t.Fatalf("fake saw %d requests, want 2", len(reqs))
	}
	conv := reqs[1].Messages.Conversation()
	if uses := conv[len(conv)-2].Content.ToolUses(); len(uses) != 1 || uses[0].Name != "apply_patch" {
		t.Errorf("the patch call Codex sent back: %+v", uses)
	}
	noProblems(t, fake)
	saveTestdata(t, "codex_exec_json_apply_patch_success.jsonl", res.Stdout, dir, fake.URL)
}

// TestCodexUsageLimit records how Codex reports a ChatGPT plan's usage
// limit: an error event and turn.failed saying "You’ve hit your usage
// limit. … try again at <time>." (a typographic apostrophe), exit 1. The
// time is local (TZ=UTC here) and carries the date unless it is today.
func TestCodexUsageLimit(t *testing.T) {
	bin := CodexBinary(t)
	t.Parallel()
	now := time.Now().UTC()
	tomorrow := now.Truncate(24 * time.Hour).Add(24*time.Hour + time.Hour + 5*time.Minute)
	tests := []struct {
		name    string
		reset   time.Time
		want    string
		fixture string
	}{
		{"another day", tomorrow, codexResetDate(tomorrow), "codex_exec_json_usage_limit.jsonl"},
		{"today", now.Truncate(time.Hour).Add(time.Hour), now.Truncate(time.Hour).Add(time.Hour).Format("3:04 PM"),
			"codex_exec_json_usage_limit_today.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.reset.Day() != now.Day() && tt.name == "today" {
				t.Skip("no whole hour left today")
			}
			dir := t.TempDir()
			fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
				fakeapi.UsageLimitTurn("five_hour", tt.reset),
			}}}})
			res := Run(t, dir, CodexEnv(t, fake.URL), codexTimeout, bin, codexArgs("work")...)
			if res.ExitCode != 1 {
				t.Errorf("exit %d, want 1\nstderr:\n%s", res.ExitCode, res.Stderr)
			}
			if time.Now().UTC().Day() != now.Day() {
				t.Skip("midnight passed during the run: the reset's form changed")
			}
			events := parseCodex(t, res.Stdout)
			wantMsg := "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), " +
				"visit https://chatgpt.com/settings/usage to purchase more credits or try again at " + tt.want + "."
			last := events[len(events)-1]
			if last.Type != "turn.failed" || last.Error == nil || last.Error.Message != wantMsg {
				t.Errorf("last event = %s\nwant message %q", last.raw, wantMsg)
			}
			if prev := events[len(events)-2]; prev.Type != "error" || prev.Message != wantMsg {
				t.Errorf("event before turn.failed = %s", prev.raw)
			}
			if n := len(fake.RequestsTo("/v1/responses")); n != 1 {
				t.Errorf("fake saw %d requests, want 1 (retries must be off)", n)
			}
			noProblems(t, fake)
			saveTestdata(t, tt.fixture, res.Stdout, dir, fake.URL)
		})
	}
}

// codexResetDate is how Codex writes a reset on another day:
// "Nov 21st, 2026 1:05 AM".
func codexResetDate(t time.Time) string {
	suffix := "th"
	switch d := t.Day(); {
	case d == 1 || d == 21 || d == 31:
		suffix = "st"
	case d == 2 || d == 22:
		suffix = "nd"
	case d == 3 || d == 23:
		suffix = "rd"
	}
	return fmt.Sprintf("%s %d%s, %d %s", t.Format("Jan"), t.Day(), suffix, t.Year(), t.Format("3:04 PM"))
}

func TestCodexResetDate(t *testing.T) {
	for in, want := range map[string]string{
		"2026-11-21T01:05:00Z": "Nov 21st, 2026 1:05 AM",
		"2026-11-22T13:00:00Z": "Nov 22nd, 2026 1:00 PM",
		"2026-12-03T00:30:00Z": "Dec 3rd, 2026 12:30 AM",
		"2026-12-13T00:30:00Z": "Dec 13th, 2026 12:30 AM",
	} {
		tm, err := time.Parse(time.RFC3339, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := codexResetDate(tm); got != want {
			t.Errorf("codexResetDate(%s) = %q, want %q", in, got, want)
		}
	}
}
