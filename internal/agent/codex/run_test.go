package codex

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/agenttest"
)

var fixedNow = time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)

func invocation(t *testing.T) agent.Invocation {
	dir := t.TempDir()
	return agent.Invocation{
		Dir: dir, Prompt: "do it", AppendSystemPrompt: "[ralph loop 1]",
		StdoutPath: filepath.Join(dir, ".ralph", "logs", "codex_output_1.log"),
		StderrPath: filepath.Join(dir, ".ralph", "logs", "codex_output_1.err"),
	}
}

func TestRunSamples(t *testing.T) {
	tests := []struct {
		sample string
		exit   int
		check  func(t *testing.T, res agent.Result)
	}{
		{"codex_exec_json_tools.jsonl", 0, func(t *testing.T, res agent.Result) {
			an := res.Analysis
			if an.Format != "stream-json" || an.SessionID != "01a1fb32-e644-7040-841a-1992e7a63f0a" || an.IsError ||
				an.Usage.InputTokens != 200 || an.Usage.OutputTokens != 40 || an.WorkType != "IMPLEMENTATION" || an.UsageLimit.Detected {
				t.Errorf("analysis %+v", an)
			}
		}},
		{"codex_exec_json_usage_limit.jsonl", 1, func(t *testing.T, res agent.Result) {
			an := res.Analysis
			if !an.IsError || !an.UsageLimit.Detected || an.UsageLimit.ResetsAt != "2026-11-21T01:05:00Z" || an.ExitCode != 1 {
				t.Errorf("analysis %+v, limit %+v", an, an.UsageLimit)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.sample, func(t *testing.T) {
			fake := &agent.FakeRunner{Stdout: string(agenttest.Sample(t, tt.sample)), Result: agent.ProcessResult{ExitCode: tt.exit, Duration: time.Second}}
			a := &Adapter{Base: agent.Base{Cmd: []string{"codex"}, Runner: fake, Now: func() time.Time { return fixedNow }}}
			inv := invocation(t)
			inv.Env, inv.Timeout = []string{"CODEX_HOME=/x"}, time.Minute
			res, err := a.Run(context.Background(), inv)
			if err != nil {
				t.Fatal(err)
			}
			argv, _ := a.Command(inv)
			got := fake.Got
			if !slices.Equal(got.Argv, argv) || got.Dir != inv.Dir || got.Timeout != time.Minute || !slices.Equal(got.Env, inv.Env) ||
				got.StdoutPath != inv.StdoutPath || got.StderrPath != inv.StderrPath || got.Stdin != nil || got.OnLine != nil {
				t.Errorf("process %+v", got)
			}
			if res.ExitCode != tt.exit || res.Duration != time.Second || res.Analysis == nil {
				t.Fatalf("result %+v", res)
			}
			tt.check(t, res)
		})
	}
}

// TestRunWithFakeAgent runs the real runner and the fake agent executable:
// a live first call, then a resume of the thread it reported.
func TestRunWithFakeAgent(t *testing.T) {
	sample, _ := filepath.Abs(filepath.Join("testdata", "codex_exec_json_tools.jsonl"))
	path := filepath.Join(t.TempDir(), "script.json")
	err := script.Script{Iterations: []script.Iteration{
		{StdoutFile: sample, LineDelay: script.Duration(5 * time.Millisecond), Files: map[string]string{"hello_codex.txt": "hi\n"}},
		{StdoutFile: filepath.Join(filepath.Dir(sample), "codex_exec_json_usage_limit.jsonl"), Stderr: "Reading additional input from stdin...\n", ExitCode: 1},
	}}.Write(path)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := script.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &Adapter{Base: agent.Base{Cmd: []string{bin}, Runner: &agent.Runner{Grace: 200 * time.Millisecond, ReapTimeout: 2 * time.Second}, Now: func() time.Time { return fixedNow }}, Sandbox: SandboxReadOnly}
	inv := invocation(t)
	inv.Env, inv.Live = []string{script.EnvScript + "=" + path}, true
	var mu sync.Mutex
	var rendered strings.Builder
	render := agent.RenderLive(&rendered)
	inv.OnEvent = func(e agent.LiveEvent) { mu.Lock(); defer mu.Unlock(); render(e) }

	res, err := a.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Analysis.SessionID != "01a1fb32-e644-7040-841a-1992e7a63f0a" {
		t.Fatalf("result %+v, analysis %+v", res, res.Analysis)
	}
	if !strings.Contains(rendered.String(), "Running a command.\n⚡ Shell echo hi > hello_codex.txt && cat hello_codex.txt\nDone.\n") {
		t.Errorf("rendered:\n%s", rendered.String())
	}

	inv.Live, inv.SessionID, inv.AppendSystemPrompt = false, res.Analysis.SessionID, "[ralph loop 2]"
	res, err = a.Run(context.Background(), inv)
	if err != nil || res.ExitCode != 1 || !res.Analysis.UsageLimit.Detected {
		t.Fatalf("second call: %+v, %v", res, err)
	}

	calls, err := script.Calls(path)
	if err != nil || len(calls) != 2 {
		t.Fatalf("calls %+v, %v", calls, err)
	}
	first, second := calls[0].Args, calls[1].Args
	if !slices.Equal(first[:6], []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "--"}) ||
		!strings.HasPrefix(first[6], "do it\n") || !strings.Contains(first[6], "[ralph loop 1]") {
		t.Errorf("first call args %q", first)
	}
	if i := slices.Index(second, "resume"); i < 0 || second[i+1] != "01a1fb32-e644-7040-841a-1992e7a63f0a" ||
		!strings.Contains(second[len(second)-1], "[ralph loop 2]") {
		t.Errorf("second call args %q", second)
	}
}
