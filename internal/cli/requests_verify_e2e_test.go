package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/github/githubtest"
)

// A request under the verify gate: the agent claims the work done twice
// while ralph's own check fails; the request halts (verify_failed) and its
// work is not thrown away — committed, pushed and kept in a draft pull
// request holding the check's output and why it stopped. `/ralph retry`
// resumes it; the claim that passes the check marks that draft ready.
func TestRequestsVerifiedOrKeptAsADraft(t *testing.T) {
	claim := func(files map[string]string) script.Iteration {
		return script.Iteration{Files: files, StdoutLines: []json.RawMessage{clarity("COMPLETE", true, true, false, "", "Done, I think.")}}
	}
	// A thin claim is made twice before it counts (the stop rules), so
	// the check runs on every second one: loops 2 and 4 fail it; after the
	// retry the agent fixes it and claims again.
	r := newRequestRig(t, script.Script{RepeatLast: true, Iterations: []script.Iteration{
		claim(map[string]string{"work.txt": "1\n"}),
		claim(map[string]string{"work.txt": "2\n"}),
		claim(map[string]string{"work.txt": "3\n"}),
		claim(map[string]string{"work.txt": "4\n"}),
		claim(map[string]string{"fixed.txt": "ok\n"}),
	}})
	r.Env = append(r.Env, `RALPH_VERIFY_CMD=test -f fixed.txt || { echo "fixed.txt is missing"; exit 1; }`, "RALPH_VERIFY_MAX_FAILURES=2")
	r.Start(1)
	n := r.gh.AddIssue("acme/app", githubtest.Issue{Title: "Fix it", Body: "Do it.", Labels: []string{"ralph"}, Author: "alice"})

	halt := r.waitComment(n, "Halted")
	for _, want := range []string{"verify_failed", "draft pull request", "/ralph retry"} {
		if !strings.Contains(halt.Body, want) {
			t.Errorf("the halt report lacks %q: %q", want, halt.Body)
		}
	}
	pulls := r.gh.Pulls("acme/app")
	if len(pulls) != 1 || !pulls[0].Draft {
		t.Fatalf("pull requests %+v: want one draft", pulls)
	}
	for _, want := range []string{"stopped before it was done", "verify_failed", "fixed.txt is missing", "| verified |", "no (exited 1)"} {
		if !strings.Contains(pulls[0].Body, want) {
			t.Errorf("the draft's body lacks %q:\n%s", want, pulls[0].Body)
		}
	}
	if log := r.Git(r.remote, "log", "--format=%s", pulls[0].Head); !strings.Contains(log, "work in progress, stopped: verify_failed") {
		t.Errorf("the agent's work was not pushed: %s", log)
	}

	r.gh.AddComment("acme/app", n, "alice", "/ralph retry")
	ready := r.waitComment(n, "verified (`test -f fixed.txt")
	if !strings.Contains(ready.Body, fmt.Sprintf("/pull/%d", pulls[0].Number)) {
		t.Errorf("not the same pull request: %q", ready.Body)
	}
	if p := r.gh.Pulls("acme/app"); len(p) != 1 || p[0].Draft || len(r.gh.Readied()) != 1 {
		t.Fatalf("pull requests %+v, readied %v: want the draft marked ready", p, r.gh.Readied())
	}
}
