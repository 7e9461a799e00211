package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/claude"
	"ralph/internal/analyze"
	"ralph/internal/fakeapi"
	"ralph/internal/plan"
)

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

func envFor(t *testing.T, baseURL string) func(string) string {
	vars := map[string]string{"ANTHROPIC_BASE_URL": baseURL, "ANTHROPIC_API_KEY": "demo", "CLAUDE_CONFIG_DIR": t.TempDir()}
	return func(k string) string { return vars[k] }
}

// argv is what ralph's Claude adapter would run for one call, minus the
// executable: the built-in agent must understand exactly that.
func argv(t *testing.T, prompt, session string, tools ...string) []string {
	t.Helper()
	ad := &claude.Adapter{Base: agent.Base{Cmd: []string{"agent"}}}
	args, err := ad.Command(agent.Invocation{Prompt: prompt, SessionID: session, AllowedTools: tools,
		OutputFormat: agent.FormatStreamJSON, Live: true, AppendSystemPrompt: "Loop 1. Plan: 3 open."})
	if err != nil {
		t.Fatal(err)
	}
	return args[1:]
}

type call struct {
	exit           int
	stdout, stderr string
	analysis       *analyze.Analysis
}

func runCall(t *testing.T, ctx context.Context, dir string, env func(string) string, args []string) call {
	t.Helper()
	var out, errb bytes.Buffer
	exit := runAgent(ctx, dir, args, env, nil, &out, &errb)
	for i, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev struct{ Type string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type == "" {
			t.Errorf("line %d is not a stream-json event: %q", i+1, line)
		}
	}
	a, err := analyze.Analyze(strings.NewReader(out.String()), analyze.Options{ExitCode: exit, AllowedTools: AllowedTools, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return call{exit: exit, stdout: out.String(), stderr: errb.String(), analysis: a}
}

// The whole demo, call by call as ralph makes them: each call resumes the
// last session, the files end up written, the plan checked off, and the
// analyzer reads the transcripts as it reads Claude Code's.
func TestAgentPlaysTheDemoScript(t *testing.T) {
	dir := t.TempDir()
	if err := NewProject(dir); err != nil {
		t.Fatal(err)
	}
	srv := fakeapi.Start(t, Script(), fakeapi.WithSleep(noSleep))
	env := envFor(t, srv.URL)
	prompt, err := os.ReadFile(filepath.Join(dir, ".ralph", "PROMPT.md"))
	if err != nil {
		t.Fatal(err)
	}
	session := ""
	want := []struct {
		status string
		exit   bool
		tools  []string
	}{
		{"IN_PROGRESS", false, []string{"Read .ralph/fix_plan.md", "Read main.go", "Edit main.go", "Edit .ralph/fix_plan.md"}},
		{"IN_PROGRESS", false, []string{"Read .ralph/fix_plan.md", "Write main_test.go", "Edit .ralph/fix_plan.md"}},
		{"COMPLETE", true, []string{"Read .ralph/fix_plan.md", "Write README.md", "Edit .ralph/fix_plan.md"}},
	}
	for i, w := range want {
		c := runCall(t, context.Background(), dir, env, argv(t, string(prompt), session, AllowedTools...))
		a := c.analysis
		if c.exit != 0 || a.IsError {
			t.Fatalf("call %d: exit %d, is_error %v\nstderr: %s\nstdout: %s", i+1, c.exit, a.IsError, c.stderr, c.stdout)
		}
		if a.Format != analyze.FormatStreamJSON || a.Status != w.status || a.ExitSignal != w.exit || a.SessionID == "" ||
			a.Usage.InputTokens == 0 || a.Usage.CostUSD <= 0 || len(a.PermissionDenials) > 0 || len(a.Errors) > 0 {
			t.Errorf("call %d: analysis %+v", i+1, a)
		}
		if session != "" && a.SessionID != session {
			t.Errorf("call %d: session %s, want the resumed %s", i+1, a.SessionID, session)
		}
		session = a.SessionID
		var tools []string
		line := claude.LiveParser(dir, func(ev agent.LiveEvent) {
			if ev.Kind == agent.LiveTool {
				tools = append(tools, ev.Tool+" "+ev.Target)
			}
			if ev.Kind == agent.LiveError {
				t.Errorf("call %d: live error %q", i+1, ev.Text)
			}
		})
		for l := range strings.Lines(c.stdout) {
			line([]byte(strings.TrimSuffix(l, "\n")))
		}
		if strings.Join(tools, ", ") != strings.Join(w.tools, ", ") {
			t.Errorf("call %d: tool calls %q, want %q", i+1, tools, w.tools)
		}
	}
	if p := srv.Problems(); len(p) > 0 {
		t.Errorf("fake problems: %q", p)
	}
	for name, want := range map[string]string{"main.go": greetedMain, "main_test.go": greetTest, "README.md": readme} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", name, b, err)
		}
	}
	pl, err := plan.Options{}.Load(filepath.Join(dir, ".ralph", "fix_plan.md"))
	if err != nil || !pl.Complete() {
		t.Errorf("plan not complete: %+v %v", pl.Counts(), err)
	}
	// Resumed calls send the earlier conversation: the last call's first
	// request holds both earlier iterations.
	for _, r := range srv.MessageRequests() {
		if r.Iteration == 2 && r.Turn == 0 && r.Messages.CountRole("assistant") < 9 {
			t.Errorf("third call sent %d assistant messages, want the resumed conversation", r.Messages.CountRole("assistant"))
		}
	}
}

func TestAgentReportsRefusedTools(t *testing.T) {
	dir := t.TempDir()
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("", "Write", map[string]string{"file_path": "x.txt", "content": "x"}),
		fakeapi.TextTurn("I could not write x.txt."),
	}}}})
	c := runCall(t, context.Background(), dir, envFor(t, srv.URL), argv(t, "go", "", "Read"))
	if c.exit != 0 || len(c.analysis.PermissionDenials) != 1 || c.analysis.PermissionDenials[0].Tool != "Write" {
		t.Errorf("exit %d, denials %+v", c.exit, c.analysis.PermissionDenials)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
		t.Error("a refused Write wrote the file")
	}
	if got := srv.MessageRequests()[1].Messages.LastToolResult(); !strings.Contains(got, "not been granted") {
		t.Errorf("tool result %q", got)
	}
}

func TestAgentReportsAPIErrors(t *testing.T) {
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ErrorTurn(529, "Overloaded"),
	}}}})
	c := runCall(t, context.Background(), t.TempDir(), envFor(t, srv.URL), argv(t, "go", "", AllowedTools...))
	if c.exit != 1 || !c.analysis.IsError || !strings.Contains(c.stdout, `"result":"API Error: 529 Overloaded"`) {
		t.Errorf("exit %d, analysis %+v\n%s", c.exit, c.analysis, c.stdout)
	}
}

func TestAgentToolErrorsGoBackToTheModel(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("", "Edit", editInput("a.txt", "x", "y")),
		fakeapi.ToolTurn("", "Edit", editInput("a.txt", "z", "y")),
		fakeapi.ToolTurn("", "Read", map[string]string{"file_path": "../outside.txt"}),
		fakeapi.ToolTurn("", "Bash", map[string]string{"command": "ls"}),
		fakeapi.TextTurn("done"),
	}}}})
	c := runCall(t, context.Background(), dir, envFor(t, srv.URL), argv(t, "go", "", "Read", "Edit", "Bash"))
	if c.exit != 0 {
		t.Fatalf("exit %d: %s", c.exit, c.stderr)
	}
	var got []string
	for _, r := range srv.MessageRequests()[1:] {
		got = append(got, r.Messages.LastToolResult())
	}
	for i, want := range []string{"2 matches", "not found", "outside the working directory", "no such tool"} {
		if i >= len(got) || !strings.Contains(got[i], want) || !strings.HasPrefix(got[i], "<tool_use_error>") {
			t.Errorf("tool result %d = %q, want an error saying %q", i, got, want)
		}
	}
}

func TestAgentStopsWhenInterrupted(t *testing.T) {
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		{Text: "slow", Delay: fakeapi.Duration(time.Minute)},
	}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	var out bytes.Buffer
	if exit := runAgent(ctx, t.TempDir(), argv(t, "go", ""), envFor(t, srv.URL), nil, &out, &out); exit != 130 {
		t.Errorf("exit %d, want 130", exit)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to stop", d)
	}
}

func TestAgentRefusesToStart(t *testing.T) {
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{fakeapi.TextTurn("hi")}}}})
	remote := func(k string) string { return map[string]string{"ANTHROPIC_BASE_URL": "http://example.com"}[k] }
	for _, c := range []struct {
		name string
		env  func(string) string
		args []string
		want string
	}{
		{"remote server", remote, argv(t, "go", ""), "not on this machine"},
		{"no server", func(string) string { return "" }, argv(t, "go", ""), "ANTHROPIC_BASE_URL is not set"},
		{"unknown session", envFor(t, srv.URL), argv(t, "go", "0b7c4a3e-1111-4222-8333-944445555666"), "no conversation found"},
		{"session id as a path", envFor(t, srv.URL), []string{"-p", "--resume", "../x", "go"}, "no conversation found"},
		{"not print mode", envFor(t, srv.URL), []string{"go"}, "pass -p"},
		{"stream-json without verbose", envFor(t, srv.URL), []string{"-p", "--output-format", "stream-json", "go"}, "requires --verbose"},
		{"unknown option", envFor(t, srv.URL), []string{"-p", "--frobnicate", "go"}, "unknown option --frobnicate"},
		{"missing value", envFor(t, srv.URL), []string{"-p", "go", "--resume"}, "needs a value"},
		{"no prompt", envFor(t, srv.URL), []string{"-p"}, "no prompt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if exit := runAgent(context.Background(), t.TempDir(), c.args, c.env, strings.NewReader(""), &out, &errb); exit != 1 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("exit %d, stderr %q, want 1 saying %q", exit, errb.String(), c.want)
			}
		})
	}
	if n := len(srv.MessageRequests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

// Without stream-json the agent prints what Claude Code prints: the result
// object, or only the result text; the prompt may come on stdin.
func TestAgentOutputFormats(t *testing.T) {
	srv := fakeapi.Start(t, fakeapi.Script{Mode: fakeapi.ModeStateless, Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.TextTurn("You said: {{prompt}}"),
	}}}})
	for format, want := range map[string]string{"text": "You said: hi\n", "json": `"result":"You said: hi"`} {
		var out, errb bytes.Buffer
		exit := runAgent(context.Background(), t.TempDir(), []string{"-p", "--output-format", format}, envFor(t, srv.URL), strings.NewReader("hi"), &out, &errb)
		if exit != 0 || !strings.Contains(out.String(), want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", format, exit, out.String(), errb.String())
		}
	}
}

func TestParseAgentArgs(t *testing.T) {
	o, err := parseAgentArgs(argv(t, "- [ ] a prompt that looks like an option", "0b7c4a3e-1111-4222-8333-944445555666", "Write,Edit", "Read", "Bash(git diff *)"))
	if err != nil {
		t.Fatal(err)
	}
	if o.prompt != "- [ ] a prompt that looks like an option" || o.resume != "0b7c4a3e-1111-4222-8333-944445555666" ||
		o.format != "stream-json" || !o.verbose || !o.print || o.appendSystem == "" ||
		strings.Join(o.allowed, ",") != "Write,Edit,Read,Bash(git diff *)" {
		t.Errorf("%+v", o)
	}
	if !o.allows("Edit") || o.allows("Bash") {
		t.Error("allows")
	}
	// ralph serve starts every Claude call with its gate.
	gated := append([]string{"--mcp-config", "/call/gate.json", "--permission-prompt-tool", "mcp__ralph__approve"}, argv(t, "go", "")...)
	if o, err := parseAgentArgs(gated); err != nil || o.prompt != "go" {
		t.Errorf("with the gate's options: %+v, %v", o, err)
	}
	if o, _ := parseAgentArgs([]string{"-p", "x"}); !o.allows("Read") || o.allows("Write") {
		t.Error("without an allow-list only Read may run")
	}
}
