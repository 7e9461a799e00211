package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
)

// The real Claude Code CLI with no login at all: `ralph run` stops after the
// first call with agent_setup_failure (exit 8) and says what to do — it used
// to back off for minutes into an open breaker.
func TestRunStopsAtOnceWithoutALogin(t *testing.T) {
	dir := newProject(t)
	env := agenttest.UnsetEnv(agenttest.ClaudeEnv(t, "http://127.0.0.1:9"), "ANTHROPIC_API_KEY")
	env = append(env, gitEnv(dir)[2:]...)
	r := runRalph(t, dir, env)
	if r.exit != 8 || !strings.Contains(r.stdout, "agent_setup_failure") || !strings.Contains(r.stdout, "Not logged in") ||
		!strings.Contains(r.stdout, "log in with its CLI or set its API key") {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
	if r.took > 90*time.Second {
		t.Errorf("took %s to give up", r.took)
	}
	if st := status(t, dir); st.ExitReason != "agent_setup_failure" || st.LoopCount != 1 {
		t.Errorf("status %+v", st)
	}
}

// A key the API rejects (401) is the same kind of failure.
func TestRunStopsAtOnceOnARejectedKey(t *testing.T) {
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ErrorTurn(401, "invalid x-api-key"),
	}}}})
	dir := newProject(t)
	env := append(agenttest.ClaudeEnv(t, srv.URL), gitEnv(dir)[2:]...)
	r := runRalph(t, dir, env)
	if r.exit != 8 || !strings.Contains(r.stdout, "agent_setup_failure") {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
}

// `ralph import` without a login names the reason from the agent's own
// output instead of pointing at an empty stderr log.
func TestImportWithoutALoginSaysWhy(t *testing.T) {
	work := t.TempDir()
	prd := filepath.Join(work, "prd.md")
	if err := os.WriteFile(prd, []byte("# Todo app\n\n## Features\n- add items\n- list items\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := agenttest.UnsetEnv(agenttest.ClaudeEnv(t, "http://127.0.0.1:9"), "ANTHROPIC_API_KEY")
	env = append(env, gitEnv(work)[2:]...)
	env = append(env, "RALPH_AGENT_CMD="+agenttest.ClaudeBinary(t))
	r := execRalph(t, work, env, "import", prd, "todo")
	if r.exit == 0 || !strings.Contains(r.stderr, "Not logged in") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.exit, r.stdout, r.stderr)
	}
}
