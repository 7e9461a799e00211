package cli

import (
	"encoding/json"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/github/githubtest"
	"ralph/internal/serve"
)

// A GitHub request on the Temporal backend: its loop runs on a worker, the
// agent's question is posted and waits inside the workflow, the
// requester's comment resumes that same run, and the work ends as a pushed
// branch and a pull request, as on the local backend. The worker keeps the
// daemon's credentials from the agent.
func TestRequestsGitHubOnTemporal(t *testing.T) {
	rr := newRequestRig(t, script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{clarity("NEEDS_CLARIFICATION", true, false, true, "Which greeting should hello.txt hold?", "asked")}},
		{Files: map[string]string{"hello.txt": "hello, world\n"},
			StdoutLines: []json.RawMessage{clarity("COMPLETE", true, true, false, "", "Added hello.txt, all done.")}},
	}})
	r := onTemporal(t, rr.Daemon)
	r.worker("a")
	r.Start(1)
	n := rr.gh.AddIssue("acme/app", githubtest.Issue{Title: "Add a greeting file", Body: "Please add hello.txt.", Labels: []string{"ralph"}, Author: "alice"})
	rr.waitComment(n, "Which greeting should hello.txt hold?")
	v := r.WaitFor("gh-acme-app-1", "waiting for an answer", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	asked := r.workflow(v.ID)
	if asked.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("while the question waits the workflow is %s, want running", asked.Status)
	}
	rr.gh.AddComment("acme/app", n, "alice", "Say hello, world.")
	rr.waitComment(n, "Pull request: https://github.com/acme/app/pull/")
	if got := r.Git("", "--git-dir", rr.remote, "show", "ralph/github-1:hello.txt"); got != "hello, world\n" {
		t.Errorf("pushed hello.txt: %q", got)
	}
	if ended := r.workflow(v.ID); ended.Execution.RunId != asked.Execution.RunId {
		t.Errorf("the answer started run %s, want the asking run %s resumed", ended.Execution.RunId, asked.Execution.RunId)
	}
	if wl := r.wlogs["a"].String(); !strings.Contains(wl, "[gh-acme-app-1] task") {
		t.Errorf("the request's calls did not run on the worker:\n%s", wl)
	}
	for _, l := range []string{r.Log.String(), r.wlogs["a"].String()} {
		if strings.Contains(l, "ghp_secrettoken123") {
			t.Error("the token in a log")
		}
	}
}

// A follow-up round on the Temporal backend: a writer's review comment on
// the request's pull request becomes a round of the same task whose call
// runs on a worker; ralph pushes the round's commit, replies in the thread
// and resolves it, and the task waits for review again.
func TestRequestsReviewRoundOnTemporal(t *testing.T) {
	rr := newRequestRig(t, script.Script{})
	rr.play(claimWith(map[string]string{"hello.txt": "hello\n"}, "Added hello.txt.", ""))
	r := onTemporal(t, rr.Daemon)
	r.worker("a")
	r.Start(1)
	pr := rr.openedAndWaiting("Add a greeting")
	calls := strings.Count(r.wlogs["a"].String(), "[gh-acme-app-1] task")

	rr.play(claimWith(map[string]string{"hello.txt": "hello, reviewer\n"}, "The greeting names the reviewer.", ""))
	c := rr.gh.AddReviewComment("acme/app", pr, githubtest.ReviewComment{Author: "alice", Body: "Greet the reviewer.", Path: "hello.txt", Line: 1})
	rr.waitFor("a reply in the review thread", func() bool { return rr.ralphReply(pr, c) != "" })
	if got := rr.ralphReply(pr, c); !strings.Contains(got, "Addressed in") || !rr.gh.Resolved("acme/app", pr, c) {
		t.Errorf("reply %q, resolved %v: want the thread answered and resolved", got, rr.gh.Resolved("acme/app", pr, c))
	}
	if got := r.Git("", "--git-dir", rr.remote, "show", "ralph/github-1:hello.txt"); got != "hello, reviewer\n" {
		t.Errorf("the round's commit was not pushed: hello.txt is %q", got)
	}
	if n := strings.Count(r.wlogs["a"].String(), "[gh-acme-app-1] task"); n <= calls {
		t.Errorf("the round ran no call on the worker (%d lines, were %d):\n%s", n, calls, r.wlogs["a"].String())
	}
	r.WaitFor("gh-acme-app-1", "waiting for review again", reviewing)
}
