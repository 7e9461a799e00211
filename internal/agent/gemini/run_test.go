package gemini

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/agenttest"
	"ralph/internal/analyze"
)

// fixedNow is when the 429 samples were captured.
var fixedNow = time.Date(2026, 11, 21, 1, 31, 0, 0, time.UTC)

func TestRunSamples(t *testing.T) {
	tests := []struct {
		name, stdout, stderr string
		exit                 int
		live                 bool
		check                func(t *testing.T, an *analyze.Analysis)
	}{
		{"json", "gemini_json_tools.json", "", 0, false, func(t *testing.T, an *analyze.Analysis) {
			if an.Format != "json" || an.SessionID != "18ca0f01-95a8-4805-885d-ed5093553531" || an.IsError ||
				an.Usage.InputTokens != 300 || an.Usage.OutputTokens != 60 || !an.HasCompletionSignal {
				t.Errorf("analysis %+v", an)
			}
		}},
		{"stream-json", "gemini_stream_json_tools.jsonl", "", 0, true, func(t *testing.T, an *analyze.Analysis) {
			if an.Format != "stream-json" || an.SessionID != "922c1e13-16a1-45b4-9cb8-bad34e7135f9" ||
				an.Usage.OutputTokens != 80 || an.WorkType != "IMPLEMENTATION" || an.FilesModified != 1 {
				t.Errorf("analysis %+v", an)
			}
		}},
		// The quota error of the json format: stdout empty, the error JSON on
		// stderr after warnings, retry notes and a stack trace; exit 429&255.
		// The limit and its reset come from the "Attempt 1 failed: … retry in
		// 20.5s" line.
		{"json 429", "", "gemini_json_429.stderr", 173, false, func(t *testing.T, an *analyze.Analysis) {
			if !an.UsageLimit.Detected || an.UsageLimit.ResetsAt != "2026-11-21T01:31:20Z" || an.ExitCode != 173 {
				t.Errorf("limit %+v, analysis %+v", an.UsageLimit, an)
			}
		}},
		{"stream-json 429", "gemini_stream_json_429.jsonl", "gemini_stream_json_429.stderr", 173, true, func(t *testing.T, an *analyze.Analysis) {
			if !an.UsageLimit.Detected || an.UsageLimit.ResetsAt != "2026-11-21T01:31:20Z" || !an.IsError ||
				an.SessionID != "1b159477-6c7d-4c19-a262-aa9f73e9f5c8" || len(an.Errors) == 0 {
				t.Errorf("limit %+v, analysis %+v", an.UsageLimit, an)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &agenttest.FakeRunner{Result: agent.ProcessResult{ExitCode: tt.exit}}
			if tt.stdout != "" {
				fake.Stdout = string(agenttest.Sample(t, tt.stdout))
			}
			if tt.stderr != "" {
				fake.Stderr = string(agenttest.Sample(t, tt.stderr))
			}
			a := &Adapter{Base: agent.Base{Cmd: []string{"gemini"}, Runner: fake, Now: func() time.Time { return fixedNow }}}
			dir := t.TempDir()
			var evs []agent.LiveEvent
			inv := agent.Invocation{
				Dir: dir, Prompt: "do it", Live: tt.live, Env: []string{"GEMINI_API_KEY=k"}, Timeout: time.Minute,
				OnEvent:    func(e agent.LiveEvent) { evs = append(evs, e) },
				StdoutPath: filepath.Join(dir, "logs", "out.log"), StderrPath: filepath.Join(dir, "logs", "err.log"),
			}
			res, err := a.Run(context.Background(), inv)
			if err != nil {
				t.Fatal(err)
			}
			argv, _ := a.Command(inv)
			if got := fake.Got; !slices.Equal(got.Argv, argv) || got.Dir != dir || !slices.Equal(got.Env, inv.Env) ||
				got.Timeout != time.Minute || got.Stdin != nil || (got.OnLine != nil) != tt.live {
				t.Errorf("process %+v", got)
			}
			if tt.live && len(evs) == 0 {
				t.Error("no live events")
			}
			if res.ExitCode != tt.exit || res.Analysis == nil {
				t.Fatalf("result %+v", res)
			}
			tt.check(t, res.Analysis)
		})
	}
}
