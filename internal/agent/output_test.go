package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/analyze"
)

func TestPromptWithContext(t *testing.T) {
	if got := PromptWithContext("task", " \n"); got != "task" {
		t.Errorf("no context: %q", got)
	}
	got := PromptWithContext("- [ ] task\n\n", "[ralph loop 3] fix_plan.md: 2 of 5 tasks open.")
	want := "- [ ] task\n\n<ralph_loop_context>\nContext from the ralph loop that runs this session (not part of the task):\n" +
		"[ralph loop 3] fix_plan.md: 2 of 5 tasks open.\n</ralph_loop_context>\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestArgChecks(t *testing.T) {
	if err := CheckArgs("x", []string{"a", strings.Repeat("b", MaxArgLen)}); err != nil {
		t.Errorf("argument at the limit: %v", err)
	}
	if err := CheckArgs("x", []string{"a", strings.Repeat("b", MaxArgLen+1)}); err == nil || !strings.HasPrefix(err.Error(), "x: an argument of 131072 bytes") {
		t.Errorf("argument over the limit: %v", err)
	}
	for v, ok := range map[string]bool{"gpt-5": true, "a b": true, "-x": false, "--flag": false, "a\nb": false, "a\x00": false} {
		if err := OptionValue("x", "--model", v); (err == nil) != ok {
			t.Errorf("OptionValue(%q) = %v", v, err)
		}
	}
}

func TestCommandWords(t *testing.T) {
	for cmd, want := range map[string][]string{"": {"def"}, "  ": {"def"}, `npx -y 'my pkg'`: {"npx", "-y", "my pkg"}} {
		if got, err := CommandWords("x", cmd, "def"); err != nil || !slices.Equal(got, want) {
			t.Errorf("CommandWords(%q) = %q, %v", cmd, got, err)
		}
	}
	if _, err := CommandWords("x", `"open`, "def"); err == nil || !strings.Contains(err.Error(), `x: command "\"open"`) {
		t.Errorf("unbalanced: %v", err)
	}
}

func TestOutputFormat(t *testing.T) {
	tests := []struct {
		format string
		live   bool
		want   string
	}{
		{"", false, "json"}, {"", true, "stream-json"}, {"json", true, "stream-json"},
		{"stream-json", false, "stream-json"}, {"text", true, "text"},
	}
	for _, tt := range tests {
		if got, err := OutputFormat("x", Invocation{OutputFormat: tt.format, Live: tt.live}); err != nil || got != tt.want {
			t.Errorf("%q live %v: %q, %v", tt.format, tt.live, got, err)
		}
	}
	if _, err := OutputFormat("x", Invocation{OutputFormat: "yaml"}); err == nil {
		t.Error("yaml accepted")
	}
}

func TestReadTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for max, want := range map[int64]string{4: "6789", 10: "0123456789", 100: "0123456789"} {
		if got, err := ReadTail(path, max); err != nil || string(got) != want {
			t.Errorf("ReadTail(%d) = %q, %v", max, got, err)
		}
	}
	if _, err := ReadTail(path+".missing", 4); err == nil {
		t.Error("missing file read")
	}
}

func TestMissing(t *testing.T) {
	all := Capabilities{StructuredOutput: true, TokenUsage: true, PermissionDenials: true, UsageLimits: true,
		SessionResume: true, ToolRestrictions: true, Streaming: true}
	if m := all.Missing(); len(m) != 0 {
		t.Errorf("all capabilities: %q", m)
	}
	c := all
	c.PermissionDenials, c.SessionResume = false, false
	m := c.Missing()
	if len(m) != 2 || !strings.HasPrefix(m[0], "no permission-denial reports: the permission-denial breaker is off") ||
		!strings.HasPrefix(m[1], "no session resume") {
		t.Errorf("missing %q", m)
	}
	if n := len((Capabilities{}).Missing()); n != 7 {
		t.Errorf("no capabilities: %d lines", n)
	}
}

func TestLiveLines(t *testing.T) {
	var got []LiveEvent
	emit := func(e LiveEvent) { got = append(got, e) }
	LiveLines(emit)([]byte("a line"))
	want := []LiveEvent{{Kind: LiveOutput, Text: "a line"}}
	if !slices.Equal(got, want) {
		t.Errorf("events %+v", got)
	}
}

func callInvocation(t *testing.T) Invocation {
	dir := t.TempDir()
	return Invocation{Dir: dir, Env: []string{"A=b"}, Timeout: time.Minute,
		StdoutPath: filepath.Join(dir, "out.log"), StderrPath: filepath.Join(dir, "err.log")}
}

func TestCallRun(t *testing.T) {
	fixed := time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)
	fake := &FakeRunner{Stdout: "working\n", Stderr: "Claude AI usage limit reached|1795219258\n",
		Result: ProcessResult{ExitCode: 1, Duration: time.Second, Warnings: []string{"w"}}}
	inv := callInvocation(t)
	inv.Live = true
	var evs []LiveEvent
	inv.OnEvent = func(e LiveEvent) { evs = append(evs, e) }
	var gotOpts analyze.Options
	c := Call{
		Agent: "x", Argv: []string{"x", "run"}, Invocation: inv, Runner: fake, Stdin: strings.NewReader("prompt"),
		Live: func(_ string, emit func(LiveEvent)) func([]byte) { return LiveLines(emit) },
		Now:  func() time.Time { return fixed }, Options: analyze.Options{AllowedTools: []string{"Write"}},
		Analyze: func(r io.Reader, o analyze.Options) (*analyze.Analysis, error) {
			gotOpts = o
			return analyze.Analyze(r, o)
		},
	}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := fake.Got
	if !slices.Equal(p.Argv, c.Argv) || p.Dir != inv.Dir || !slices.Equal(p.Env, inv.Env) || p.Timeout != time.Minute ||
		p.StdoutPath != inv.StdoutPath || p.StderrPath != inv.StderrPath || string(fake.GotStdin) != "prompt" {
		t.Errorf("process %+v", p)
	}
	if res.ExitCode != 1 || res.Duration != time.Second || !slices.Equal(res.Warnings, []string{"w"}) || res.StdoutPath != inv.StdoutPath {
		t.Errorf("result %+v", res)
	}
	if gotOpts.ExitCode != 1 || !gotOpts.Now.Equal(fixed) || !slices.Equal(gotOpts.AllowedTools, []string{"Write"}) ||
		!strings.Contains(string(gotOpts.Stderr), "usage limit") {
		t.Errorf("analysis options %+v", gotOpts)
	}
	if !res.Analysis.UsageLimit.Detected || len(evs) != 1 || evs[0].Text != "working" {
		t.Errorf("analysis %+v, events %+v", res.Analysis, evs)
	}

	// Not live: no line callback.
	inv.Live = false
	c.Invocation = inv
	if _, err := c.Run(context.Background()); err != nil || fake.Got.OnLine != nil {
		t.Errorf("OnLine %v, err %v", fake.Got.OnLine != nil, err)
	}
}

func TestCallRunFailures(t *testing.T) {
	inv := callInvocation(t)
	se := &StartError{Command: "x", Err: os.ErrNotExist}
	res, err := Call{Agent: "x", Argv: []string{"x"}, Invocation: inv, Hint: "install x",
		Runner: &FakeRunner{Err: se, Result: ProcessResult{ExitCode: -1, StartErr: se}}}.Run(context.Background())
	if !errors.Is(err, os.ErrNotExist) || se.Hint != "install x" || res.StartErr == nil || res.Analysis != nil || res.ExitCode != -1 {
		t.Errorf("start error: %+v, %v", res, err)
	}
	// A hint of the caller's own is kept.
	se = &StartError{Command: "x", Err: os.ErrNotExist, Hint: "mine"}
	_, _ = Call{Argv: []string{"x"}, Invocation: inv, Hint: "install x", Runner: &FakeRunner{Err: se}}.Run(context.Background())
	if se.Hint != "mine" {
		t.Errorf("hint %q", se.Hint)
	}

	// Cancelled before it started: nothing to analyse, no error.
	res, err = Call{Argv: []string{"x"}, Invocation: inv,
		Runner: &FakeRunner{Result: ProcessResult{ExitCode: -1, Interrupted: true}}}.Run(context.Background())
	if err != nil || !res.Interrupted || res.Analysis != nil {
		t.Errorf("interrupted: %+v, %v", res, err)
	}

	_, err = Call{Agent: "x", Argv: []string{"x"}, Invocation: inv, Runner: &FakeRunner{},
		Analyze: func(io.Reader, analyze.Options) (*analyze.Analysis, error) { return nil, errors.New("bad input") }}.Run(context.Background())
	if err == nil || err.Error() != "x: analyse output: bad input" {
		t.Errorf("analyzer error: %v", err)
	}
}

// An output line too long to read may hold the call's usage; the run is
// told instead of silently counting nothing.
func TestCallRunWarnsOfSkippedLines(t *testing.T) {
	huge := `{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("x", 17<<20) + `"}]}}` + "\n"
	fake := &FakeRunner{Stdout: huge + `{"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"ok"}` + "\n"}
	res, err := Call{Agent: "x", Argv: []string{"x"}, Invocation: callInvocation(t), Runner: fake}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "not counted") }) {
		t.Fatalf("no warning about the skipped line: %q", res.Warnings)
	}
}
