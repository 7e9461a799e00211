package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
)

// The main agent hits its usage limit with the reset minutes ahead; the
// fallback takes over at once, in a fresh session, and finishes the work,
// so the run ends in seconds without waiting for the reset. Each CLI gets
// the limit in its own protocol: Claude Code a 429 with a subscription's
// rate-limit headers ("You've hit your 5-hour limit · resets …"), Codex a
// Responses 429 usage_limit_reached ("… try again at …"), Gemini CLI a
// RESOURCE_EXHAUSTED whose retry delay is too long to retry (exit 173).
func TestRunFallsBack(t *testing.T) {
	t.Parallel()
	tests := []struct{ from, to string }{
		{"claude", "codex"},
		{"codex", "gemini"},
		{"gemini", "codex"},
		// From OpenCode: see opencode_limit_e2e_test.go (its adapter has
		// to stop the call, as `opencode run` waits a 429 out silently).
		{"codex", "opencode"},
	}
	for _, tt := range tests {
		t.Run(tt.from+"_to_"+tt.to, func(t *testing.T) {
			fromBin, toBin := agentBinary(t, tt.from), agentBinary(t, tt.to)
			t.Parallel()
			dir := newProject(t)
			// Whole minutes: the CLIs print the reset to the minute.
			reset := time.Now().Add(10 * time.Minute).Truncate(time.Minute)
			srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
				{Turns: []fakeapi.Turn{fakeapi.UsageLimitTurn("five_hour", reset)}},
				{Turns: finishTurns(tt.to, dir)},
			}})
			// Without a model Gemini CLI first asks the fake to pick one,
			// and the fake would take that for the next iteration.
			env := append(agentEnv(t, srv.URL, tt.from, tt.to), "RALPH_"+strings.ToUpper(tt.to)+"_CMD="+toBin,
				"RALPH_GEMINI_MODEL="+agenttest.GeminiModel)
			r := runAgent(t, dir, tt.from, fromBin, env, "--fallback-agent", tt.to)

			checkCompleted(t, dir, r, tt.from, tt.to)
			if want := "agent: switching from " + tt.from + " to " + tt.to + ": " + tt.from + " is held by a usage limit until"; !strings.Contains(r.stdout, want) {
				t.Errorf("output does not say %q", want)
			}
			if strings.Contains(r.stdout, "waiting (usage_limit)") || !time.Now().Before(reset) {
				t.Errorf("ralph waited for the reset at %s", reset.Format(time.TimeOnly))
			}
			if m := metrics(t, dir)[0]; !m.UsageLimit {
				t.Errorf("the first call was not read as a usage limit: %+v", m)
			}
			checkFile(t, dir, "hello.txt", "hello\n")
			var limited int
			for _, req := range srv.MessageRequests() {
				switch req.Iteration {
				case 0:
					limited++
				case 1:
					// One agent cannot resume another's session.
					if p := req.Messages.Prompts(); len(p) != 1 {
						t.Errorf("%s request %s with %d prompts, want a fresh session", tt.to, req.Path, len(p))
					}
				}
			}
			if limited != 1 {
				t.Errorf("%s made %d model calls at its limit, want 1 (no retries)", tt.from, limited)
			}
			noProblems(t, srv)
		})
	}
}

func agentBinary(t *testing.T, name string) string {
	t.Helper()
	switch name {
	case "claude":
		return agenttest.ClaudeBinary(t)
	case "codex":
		return agenttest.CodexBinary(t)
	case "gemini":
		return agenttest.GeminiBinary(t)
	case "opencode":
		return agenttest.OpencodeBinary(t)
	}
	t.Fatalf("agentBinary: unknown agent %q", name)
	return ""
}

// finishTurns create hello.txt and check the whole plan off with the
// agent's own tools, then report the work complete.
func finishTurns(agent, dir string) []fakeapi.Turn {
	done := fakeapi.TextTurn("All tasks are complete." + statusBlock("COMPLETE", true))
	switch agent {
	case "codex":
		return []fakeapi.Turn{
			fakeapi.ToolTurn("Creating hello.txt.", "exec_command", map[string]string{"cmd": "printf 'hello\\n' > hello.txt && " + checkFirst + " && " + checkSecond}),
			done,
		}
	case "gemini":
		return []fakeapi.Turn{
			fakeapi.ToolTurn("Creating hello.txt.", "write_file", map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
			fakeapi.ToolTurn("", "write_file", map[string]string{"file_path": filepath.Join(dir, ".ralph", "fix_plan.md"), "content": donePlanMD}),
			done,
		}
	case "opencode":
		return []fakeapi.Turn{
			fakeapi.ToolTurn("Creating hello.txt.", "write", map[string]string{"filePath": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
			fakeapi.ToolTurn("", "write", map[string]string{"filePath": filepath.Join(dir, ".ralph", "fix_plan.md"), "content": donePlanMD}),
			done,
		}
	}
	panic("finishTurns: no turns for " + agent)
}
