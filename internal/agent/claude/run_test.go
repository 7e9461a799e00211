package claude

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/agenttest"
	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/shellwords"
)

var fakeAgent string

func TestMain(m *testing.M) { os.Exit(script.Main(m, &fakeAgent)) }

var fixedNow = time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)

// stubRunner plays a process without running one: it records the Process
// and writes canned output to its log files.
type stubRunner struct {
	got            agent.Process
	stdout, stderr string
	res            agent.ProcessResult
}

func (s *stubRunner) Run(_ context.Context, p agent.Process) (agent.ProcessResult, error) {
	s.got = p
	if err := os.MkdirAll(filepath.Dir(p.StdoutPath), 0o755); err != nil {
		return s.res, err
	}
	if err := os.WriteFile(p.StdoutPath, []byte(s.stdout), 0o644); err != nil {
		return s.res, err
	}
	if err := os.WriteFile(p.StderrPath, []byte(s.stderr), 0o644); err != nil {
		return s.res, err
	}
	if p.OnLine != nil {
		for _, l := range strings.Split(s.stdout, "\n") {
			p.OnLine([]byte(l))
		}
	}
	return s.res, nil
}

func invocation(t *testing.T) agent.Invocation {
	dir := t.TempDir()
	return agent.Invocation{
		Dir: dir, Prompt: "do it", AppendSystemPrompt: "loop context",
		StdoutPath: filepath.Join(dir, ".ralph", "logs", "claude_output_1.log"),
		StderrPath: filepath.Join(dir, ".ralph", "logs", "claude_output_1.err"),
	}
}

func TestRunAnalysesOutput(t *testing.T) {
	stub := &stubRunner{stdout: string(agenttest.Sample(t, "claude_stream_json_tools.jsonl")), res: agent.ProcessResult{ExitCode: 0, Duration: time.Second}}
	a := &Adapter{Base: agent.Base{Cmd: []string{"claude"}, Runner: stub, Now: func() time.Time { return fixedNow }}}
	inv := invocation(t)
	inv.Env, inv.Timeout, inv.Live = []string{"A=b"}, time.Minute, true
	var evs []agent.LiveEvent
	inv.OnEvent = func(e agent.LiveEvent) { evs = append(evs, e) }

	res, err := a.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := a.Command(inv)
	if !slices.Equal(stub.got.Argv, argv) || stub.got.Dir != inv.Dir || stub.got.Timeout != time.Minute ||
		!slices.Equal(stub.got.Env, inv.Env) || stub.got.StdoutPath != inv.StdoutPath || stub.got.StderrPath != inv.StderrPath {
		t.Errorf("process = %+v", stub.got)
	}
	an := res.Analysis
	if an == nil || an.Format != "stream-json" || an.SessionID != "1f619081-1f59-4397-bd4c-8791b3f050a0" ||
		an.Usage.OutputTokens != 60 || an.ExitCode != 0 {
		t.Fatalf("analysis = %+v", an)
	}
	if res.Duration != time.Second || res.StdoutPath != inv.StdoutPath || res.StderrPath != inv.StderrPath {
		t.Errorf("result = %+v", res)
	}
	if len(evs) != 4 || evs[1].Target != "hello.txt" {
		t.Errorf("live events = %+v", evs)
	}

	// Not live: no line callback, whatever OnEvent says.
	inv.Live = false
	if _, err := a.Run(context.Background(), inv); err != nil || stub.got.OnLine != nil {
		t.Errorf("non-live run: OnLine set %v, err %v", stub.got.OnLine != nil, err)
	}
}

// TestRunPassesAllowedToolsAndStderr: the analyzer gets the flattened
// allow-list (a refused compound git diff is not a real denial) and the
// stderr log (where some limit messages go).
func TestRunPassesAllowedToolsAndStderr(t *testing.T) {
	result := `{"type":"result","subtype":"success","is_error":true,"session_id":"s1","result":"request failed",` +
		`"permission_denials":[{"tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"git diff | head"}}]}`
	stub := &stubRunner{stdout: result, stderr: "Claude AI usage limit reached|1795219258\n", res: agent.ProcessResult{ExitCode: 1}}
	a := &Adapter{Base: agent.Base{Cmd: []string{"claude"}, Runner: stub, Now: func() time.Time { return fixedNow }}}
	inv := invocation(t)
	inv.AllowedTools = []string{"Write,Bash(git diff *)"}
	res, err := a.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	an := res.Analysis
	if len(an.PermissionDenials) != 0 {
		t.Errorf("denials = %+v, want the compound command filtered by Bash(git diff *)", an.PermissionDenials)
	}
	if !an.UsageLimit.Detected || an.UsageLimit.ResetsAt != "2026-11-21T00:00:58Z" || an.ExitCode != 1 {
		t.Errorf("usage limit = %+v, exit %d", an.UsageLimit, an.ExitCode)
	}
}

// fakeInvocation runs the real adapter and runner against the fake agent
// executable with the given script.
func fakeInvocation(t *testing.T, s script.Script) (*Adapter, agent.Invocation, string) {
	inv := invocation(t)
	path := filepath.Join(t.TempDir(), "script.json")
	if err := s.Write(path); err != nil {
		t.Fatal(err)
	}
	inv.Env = []string{script.EnvScript + "=" + path}
	a, err := New(shellwords.Join([]string{fakeAgent}))
	if err != nil {
		t.Fatal(err)
	}
	a.Runner = &agent.Runner{Grace: 200 * time.Millisecond, ReapTimeout: 2 * time.Second}
	a.Now = func() time.Time { return fixedNow }
	return a, inv, path
}

func TestRunTimeoutStillAnalyses(t *testing.T) {
	a, inv, _ := fakeInvocation(t, script.Script{Iterations: []script.Iteration{{
		Stdout: `{"type":"system","subtype":"init","session_id":"s-partial"}` + "\n",
		Sleep:  script.Duration(time.Hour), IgnoreSIGTERM: true,
	}}})
	inv.Timeout = 300 * time.Millisecond
	res, err := a.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != 137 || res.Analysis == nil || res.Analysis.SessionID != "s-partial" {
		t.Errorf("result %+v, analysis %+v", res, res.Analysis)
	}
}
