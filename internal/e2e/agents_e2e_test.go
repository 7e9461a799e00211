package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/loop"
	"ralph/internal/store"
)

// These tests run `ralph run` with the real Codex, Gemini CLI and OpenCode
// (and Claude Code as the agent a fallback takes over from) against one
// fake on 127.0.0.1, which serves each CLI its own protocol from a single
// Script: its iterations go, in order, to whichever agent asks next.

// agentEnv is the one environment ralph runs in for the agents named:
// every agent ralph starts inherits it, so it holds what each CLI needs
// (from agenttest) and nothing from the parent but PATH.
//
// agenttest gives every CLI a HOME of its own, and a run has only one.
// Claude Code (CLAUDE_CONFIG_DIR) and Codex (CODEX_HOME) already read
// their configuration from a variable of their own; Gemini CLI and OpenCode
// are moved to theirs (GEMINI_CLI_HOME, the XDG directories), so the
// shared HOME is a fresh, empty one. TMPDIR is ralph's own too: ralph makes
// each call a fresh one under it. Any other variable two CLIs both set must
// agree, or the test fails here rather than with a puzzling CLI error.
func agentEnv(t *testing.T, url string, names ...string) []string {
	t.Helper()
	home := t.TempDir()
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	merged := map[string]string{"PATH": os.Getenv("PATH"), "HOME": home, "TMPDIR": tmp, "TZ": "UTC"}
	order := []string{"PATH", "HOME", "TMPDIR", "TZ"}
	owner := map[string]string{}
	for _, name := range names {
		for _, kv := range ownHome(t, name, cliEnv(t, name, url)) {
			k, v, _ := strings.Cut(kv, "=")
			if k == "HOME" || k == "TMPDIR" {
				continue
			}
			if old, ok := merged[k]; ok && old != v {
				t.Fatalf("agentEnv: %s and %s both set %s, to %q and %q", owner[k], name, k, old, v)
			}
			if _, ok := merged[k]; !ok {
				order = append(order, k)
			}
			merged[k], owner[k] = v, name
		}
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+merged[k])
	}
	// A CLI that wrote to the shared HOME did not read its configuration
	// from where agenttest put it; ralph removes each call's TMPDIR.
	t.Cleanup(func() {
		var left []string
		_ = filepath.WalkDir(home, func(path string, _ fs.DirEntry, err error) error {
			if path != home && path != tmp {
				left = append(left, strings.TrimPrefix(path, home+string(filepath.Separator)))
			}
			return err
		})
		if len(left) > 0 {
			t.Errorf("the shared HOME is not as ralph started with it: %s", strings.Join(left, ", "))
		}
	})
	return env
}

// cliEnv is agenttest's environment for the CLI called name.
func cliEnv(t *testing.T, name, url string) []string {
	t.Helper()
	switch name {
	case "claude":
		// Subscription auth: only then does the CLI report a usage limit
		// with its reset ("You've hit your 5-hour limit · resets …").
		env := agenttest.UnsetEnv(agenttest.ClaudeEnv(t, url), "ANTHROPIC_API_KEY")
		return append(env, "CLAUDE_CODE_OAUTH_TOKEN=dummy")
	case "codex":
		return agenttest.CodexEnv(t, url)
	case "gemini":
		return agenttest.GeminiEnv(t, url)
	case "opencode":
		return agenttest.OpencodeEnv(t, url)
	}
	t.Fatalf("cliEnv: unknown agent %q", name)
	return nil
}

// ownHome points the CLI at the HOME agenttest prepared for it through a
// variable only that CLI reads, so that the shared HOME can be another.
func ownHome(t *testing.T, name string, env []string) []string {
	t.Helper()
	home := lookupEnv(env, "HOME")
	switch name {
	case "gemini":
		return append(env, "GEMINI_CLI_HOME="+home)
	case "opencode":
		return append(env,
			"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
			"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
			"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
	}
	return env
}

func lookupEnv(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// runAgent runs `ralph run` on dir with the real CLI bin as the main agent.
func runAgent(t *testing.T, dir, name, bin string, env []string, args ...string) run {
	t.Helper()
	args = append([]string{"run", "-C", dir, "--agent", name, "--agent-cmd", bin}, args...)
	return execRalph(t, "", append(env, "RALPH_DELAY=0", "RALPH_FAILURE_BACKOFF=0", "RALPH_CLAUDE_TIMEOUT_MINUTES=2"), args...)
}

// metrics reads the run's logs/metrics.jsonl.
func metrics(t *testing.T, dir string) []loop.Metrics {
	t.Helper()
	var out []loop.Metrics
	bad, err := store.ReadMetrics(filepath.Join(dir, ".ralph", "logs", "metrics.jsonl"), func(_ int, rec json.RawMessage) error {
		var m loop.Metrics
		if err := json.Unmarshal(rec, &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil || len(bad) > 0 {
		t.Fatalf("metrics.jsonl: %v %v", err, bad)
	}
	return out
}

// checkFile fails unless dir/name holds want.
func checkFile(t *testing.T, dir, name, want string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
		t.Errorf("%s = %q, %v; want %q", name, b, err, want)
	}
}

// checkCompleted checks what a run that ends with project_complete leaves
// behind; agents are the agents of its calls, in order.
func checkCompleted(t *testing.T, dir string, r run, agents ...string) {
	t.Helper()
	if r.exit != 0 || !strings.Contains(r.stdout, "project_complete") {
		t.Fatalf("exit %d, want 0 with project_complete", r.exit)
	}
	last := agents[len(agents)-1]
	st := status(t, dir)
	if st.ExitReason != "project_complete" || st.LoopCount != len(agents) || st.Agent != last || st.Totals.InputTokens == 0 {
		t.Errorf("status: exit_reason %q, loop_count %d, agent %q, input tokens %d; want project_complete, %d, %q, some",
			st.ExitReason, st.LoopCount, st.Agent, st.Totals.InputTokens, len(agents), last)
	}
	ms := metrics(t, dir)
	if len(ms) != len(agents) {
		t.Fatalf("%d metrics lines, want %d", len(ms), len(agents))
	}
	for i, m := range ms {
		if m.Agent != agents[i] {
			t.Errorf("metrics line %d: agent %q, want %q", i+1, m.Agent, agents[i])
		}
	}
	if m := ms[len(ms)-1]; m.ExitCode != 0 || m.Status != "COMPLETE" || !m.ExitSignal || m.InputTokens == 0 {
		t.Errorf("last metrics: exit %d status %q exit_signal %v input tokens %d", m.ExitCode, m.Status, m.ExitSignal, m.InputTokens)
	}
}

// resumedFirst reports whether the model call that opened the second
// iteration carried the first iteration's tool results: the agent resumed
// the first session instead of starting a new one.
func resumedFirst(srv *fakeapi.Server) bool {
	for _, req := range srv.MessageRequests() {
		if req.Iteration != 1 || req.Turn != 0 {
			continue
		}
		for _, m := range req.Messages.Conversation() {
			for _, b := range m.Content.ToolResults() {
				if strings.HasPrefix(b.ToolUseID, "toolu_i0t") {
					return true
				}
			}
		}
	}
	return false
}

// noProblems fails on every request the fake could not answer.
func noProblems(t *testing.T, srv *fakeapi.Server) {
	t.Helper()
	for _, p := range srv.Problems() {
		t.Errorf("fake: %s", p)
	}
}

// The plan, one step per iteration: checking both tasks at once would end
// the run as plan_complete before the second call.
const (
	checkFirst  = `sed -i 's/^- \[ \] Create hello.txt/- [x] Create hello.txt/' .ralph/fix_plan.md`
	checkSecond = `sed -i 's/^- \[ \] Check the plan/- [x] Check the plan/' .ralph/fix_plan.md`
)

// Each CLI works through the plan in two iterations with its own real
// tools, the second resuming the first session (`codex exec resume`,
// --resume, --session), and the run completes.
func TestRunCompletesWithEachAgent(t *testing.T) {
	second := func(tool string, input map[string]string) fakeapi.Iteration {
		return fakeapi.Iteration{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Checking the plan.", tool, input),
			fakeapi.TextTurn("All tasks are complete." + statusBlock("COMPLETE", true)),
		}}
	}
	created := fakeapi.TextTurn("Created hello.txt." + statusBlock("IN_PROGRESS", false))
	checkShell := "printf 'checked\\n' > checked.txt && " + checkSecond
	tests := []struct {
		name   string
		binary func(testing.TB) string
		script func(dir string) []fakeapi.Iteration
		args   []string
		also   func(t *testing.T, dir string)
	}{
		{"codex", agenttest.CodexBinary, func(dir string) []fakeapi.Iteration {
			return []fakeapi.Iteration{
				{Turns: []fakeapi.Turn{
					fakeapi.ToolTurn("Creating hello.txt.", "exec_command", map[string]string{"cmd": "printf 'hello\\n' > hello.txt && " + checkFirst}),
					created,
				}},
				second("exec_command", map[string]string{"cmd": checkShell}),
			}
		}, nil, func(t *testing.T, dir string) {
			// A resumed thread reports the thread's usage so far: counted as
			// it grows, the run's total is the thread's, not the sum of both
			// reports.
			if in, st := codexThreadInput(t, dir), status(t, dir); in == 0 || st.Totals.InputTokens != in {
				t.Errorf("status counts %d input tokens, the thread used %d", st.Totals.InputTokens, in)
			}
		}},
		{"gemini", agenttest.GeminiBinary, func(dir string) []fakeapi.Iteration {
			return []fakeapi.Iteration{
				{Turns: []fakeapi.Turn{
					fakeapi.ToolTurn("Creating hello.txt.", "write_file", map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
					fakeapi.ToolTurn("", "write_file", map[string]string{"file_path": filepath.Join(dir, ".ralph", "fix_plan.md"), "content": strings.Replace(planMD, "- [ ] Create", "- [x] Create", 1)}),
					created,
				}},
				second("run_shell_command", map[string]string{"command": checkShell, "description": "Check the plan"}),
			}
		}, []string{"--model", agenttest.GeminiModel}, nil},
		{"opencode", agenttest.OpencodeBinary, func(dir string) []fakeapi.Iteration {
			return []fakeapi.Iteration{
				{Turns: []fakeapi.Turn{
					fakeapi.ToolTurn("Creating hello.txt.", "write", map[string]string{"filePath": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
					fakeapi.ToolTurn("", "bash", map[string]string{"command": checkFirst, "description": "Check the task off"}),
					created,
				}},
				second("bash", map[string]string{"command": checkShell, "description": "Check the plan"}),
			}
		}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := tt.binary(t)
			t.Parallel()
			dir := newProject(t)
			srv := fakeapi.Start(t, fakeapi.Script{Iterations: tt.script(dir)})
			r := runAgent(t, dir, tt.name, bin, agentEnv(t, srv.URL, tt.name), tt.args...)
			checkCompleted(t, dir, r, tt.name, tt.name)
			checkFile(t, dir, "hello.txt", "hello\n")
			checkFile(t, dir, "checked.txt", "checked\n")
			checkFile(t, dir, ".ralph/fix_plan.md", donePlanMD)
			if !resumedFirst(srv) {
				t.Error("the second call did not resume the first session")
			}
			if tt.also != nil {
				tt.also(t, dir)
			}
			noProblems(t, srv)
		})
	}
}

// codexThreadInput is the input tokens of the last turn.completed event
// in the newest iteration's stdout log.
func codexThreadInput(t *testing.T, dir string) int64 {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, ".ralph", "logs", "iteration_*.stdout.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no iteration logs: %v", err)
	}
	slices.Sort(logs)
	b, err := os.ReadFile(logs[len(logs)-1])
	if err != nil {
		t.Fatal(err)
	}
	var in int64
	for line := range strings.Lines(string(b)) {
		var ev struct {
			Type  string `json:"type"`
			Usage struct {
				InputTokens int64 `json:"input_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "turn.completed" {
			in = ev.Usage.InputTokens
		}
	}
	return in
}
