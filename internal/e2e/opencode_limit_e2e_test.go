package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/fakeapi"
)

// OpenCode meets a 429 with a reset minutes ahead and would wait it out in
// silence until the call's timeout; ralph reads the rate limit in its log,
// stops it after the quiet window, and the fallback finishes the work long
// before the timeout (2 minutes here) or the reset.
func TestRunFallsBackFromOpencode(t *testing.T) {
	fromBin, toBin := agentBinary(t, "opencode"), agentBinary(t, "codex")
	t.Parallel()
	dir := newProject(t)
	reset := time.Now().Add(10 * time.Minute).Truncate(time.Minute)
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{fakeapi.UsageLimitTurn("five_hour", reset)}},
		{Turns: finishTurns("codex", dir)},
	}})
	env := append(agentEnv(t, srv.URL, "opencode", "codex"), "RALPH_CODEX_CMD="+toBin)
	r := runAgent(t, dir, "opencode", fromBin, env, "--fallback-agent", "codex")

	checkCompleted(t, dir, r, "opencode", "codex")
	if want := "agent: switching from opencode to codex: opencode is held by a usage limit until"; !strings.Contains(r.stdout, want) {
		t.Errorf("output does not say %q:\n%s", want, r.stdout)
	}
	if r.took > time.Minute {
		t.Errorf("the run took %v: OpenCode was not stopped at its limit", r.took.Round(time.Second))
	}
	m := metrics(t, dir)[0]
	if !m.UsageLimit || m.TimedOut {
		t.Errorf("the first call was not read as a usage limit: %+v", m)
	}
	checkFile(t, dir, "hello.txt", "hello\n")
	var limited int
	for _, req := range srv.MessageRequests() {
		if req.Iteration == 0 {
			limited++
		}
	}
	if limited != 1 {
		t.Errorf("opencode made %d model calls at its limit, want 1", limited)
	}
	// The iteration's stderr log says why ralph stopped OpenCode.
	logs, _ := filepath.Glob(filepath.Join(dir, ".ralph", "logs", "*.stderr.log"))
	var noted bool
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		noted = noted || strings.Contains(string(b), "ralph: stopped opencode at a provider rate limit: This request would exceed your account's rate limit.")
	}
	if !noted {
		t.Errorf("no stderr log among %q notes the stop", logs)
	}
	noProblems(t, srv)
}
