package opencode

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
	"ralph/internal/analyze"
	"ralph/internal/shellwords"
)

func invocation(t *testing.T) agent.Invocation {
	dir := t.TempDir()
	return agent.Invocation{
		Dir: dir, Prompt: "- [ ] do it", AppendSystemPrompt: "[ralph loop 1]",
		StdoutPath: filepath.Join(dir, "logs", "opencode_output_1.log"),
		StderrPath: filepath.Join(dir, "logs", "opencode_output_1.err"),
	}
}

// TestRunNormalizes: Run analyses through Normalize, and stderr (where
// OpenCode prints its permission notes) reaches the analysis too.
func TestRunNormalizes(t *testing.T) {
	fake := &agenttest.FakeRunner{
		Stdout: string(agenttest.Sample(t, "opencode_json_failures.jsonl")),
		Stderr: "! permission requested: external_directory (/etc/*); auto-rejecting\nError: connection refused\n",
		Result: agent.ProcessResult{ExitCode: 0},
	}
	a := &Adapter{Base: agent.Base{Cmd: []string{"opencode"}, Runner: fake, Now: func() time.Time { return fixedNow }}}
	inv := invocation(t)
	inv.Live = true
	var evs []agent.LiveEvent
	inv.OnEvent = func(e agent.LiveEvent) { evs = append(evs, e) }
	res, err := a.Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	an := res.Analysis
	if an.SessionID != "ses_1ea551140ffedVQFo35xGxPtJ8" || len(an.PermissionDenials) != 1 || an.Usage.CostUSD != 0.0091 {
		t.Errorf("analysis %+v", an)
	}
	if !slices.Contains(an.Errors, "Error: connection refused") {
		t.Errorf("stderr not analysed: %q", an.Errors)
	}
	if len(evs) != 4 || fake.Got.Stdin != nil {
		t.Errorf("live events %+v, stdin %v", evs, fake.Got.Stdin)
	}
}

// TestRunStopsAtRateLimit: the fake agent plays OpenCode at a 429, its
// recorded log on stderr and then silence; the real runner stops it once
// the quiet window is over, and the call reads as a usage limit. The same
// fake with the recorded log of a good run is left alone.
func TestRunStopsAtRateLimit(t *testing.T) {
	bin, err := script.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	success, _ := filepath.Abs(filepath.Join("testdata", "opencode_run_print_logs_success.jsonl"))
	tests := []struct {
		name  string
		it    script.Iteration
		limit bool
	}{
		{"429", script.Iteration{Stderr: string(agenttest.Sample(t, "opencode_run_print_logs_429.stderr")), Sleep: script.Duration(time.Hour)}, true},
		{"success", script.Iteration{StdoutFile: success, Stderr: string(agenttest.Sample(t, "opencode_run_print_logs_success.stderr"))}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "script.json")
			if err := (script.Script{Iterations: []script.Iteration{tt.it}}).Write(path); err != nil {
				t.Fatal(err)
			}
			a, err := New(shellwords.Join([]string{bin}))
			if err != nil {
				t.Fatal(err)
			}
			a.Runner = &agent.Runner{Grace: 200 * time.Millisecond, ReapTimeout: 2 * time.Second}
			a.Now = func() time.Time { return fixedNow }
			a.LimitQuiet = 200 * time.Millisecond
			inv := invocation(t)
			inv.Env = []string{script.EnvScript + "=" + path}
			inv.Timeout = time.Minute
			start := time.Now()
			res, err := a.Run(context.Background(), inv)
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("took %v", took)
			}
			an := res.Analysis
			marked := strings.Contains(readFile(t, inv.StderrPath), "\n"+limitMarker+recordedLimit+"\n")
			if !tt.limit {
				if res.ExitCode != 0 || an.Status != "COMPLETE" || an.UsageLimit.Detected || marked || len(an.Errors) > 0 {
					t.Errorf("result %+v, analysis %+v", res, an)
				}
				return
			}
			if res.TimedOut || res.Interrupted || res.ExitCode != 143 || !marked {
				t.Errorf("result %+v, stderr noted: %v", res, marked)
			}
			want := analyze.UsageLimit{Detected: true, Kind: analyze.LimitUnknown, Message: recordedLimit}
			if an.UsageLimit != want {
				t.Errorf("usage limit %+v, want %+v", an.UsageLimit, want)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
