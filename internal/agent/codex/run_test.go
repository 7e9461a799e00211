package codex

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/agenttest"
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
			fake := &agenttest.FakeRunner{Stdout: string(agenttest.Sample(t, tt.sample)), Result: agent.ProcessResult{ExitCode: tt.exit, Duration: time.Second}}
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
