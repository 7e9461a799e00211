package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"ralph/internal/fakeapi"
	"ralph/internal/github/githubtest"
	"ralph/internal/servetest"
)

// With the real Claude Code CLI: a pull request opened as a draft because
// ralph's own check (VERIFY_CMD) failed when the loop's budget ran out;
// CI's check run fails on its head the same way; the follow-up round is
// given the check's output, and the model's Write adds what was missing;
// ralph pushes the round's commit and, its own check passing now, marks
// the draft ready for review (GraphQL markPullRequestReadyForReview).
func TestRequestCheckRoundMarksDraftReadyWithClaude(t *testing.T) {
	r := newClaudeRequests(t, `RALPH_VERIFY_CMD=sh hello_test.sh`, "RALPH_VERIFY_MAX_FAILURES=9", "RALPH_REQUEST_MAX_LOOPS=3")
	r.play(r.write("hello.txt", "hello\n"), claim("Added hello.txt."))
	pr := r.opened("Add a greeting", "Draft pull request")
	if !pr.Draft || !strings.Contains(pr.Body, "hello_test.sh") || !strings.Contains(pr.Body, "No such file") {
		t.Fatalf("want a draft holding the failing check's output: draft %v, body:\n%s", pr.Draft, pr.Body)
	}

	r.play(r.write("hello_test.sh", "grep -q hello hello.txt\n"), claim("Added the missing test script."))
	r.gh.AddCheckRun("acme/app", r.gh.HeadSHA("acme/app", pr.Number), githubtest.CheckRun{Name: "unit", Conclusion: "failure",
		Title: "1 test failed", Summary: "sh: hello_test.sh: No such file or directory"})
	r.pushedRound(pr.Number, 1)
	if got := r.show(pr.Head, "hello_test.sh"); got != "grep -q hello hello.txt\n" {
		t.Errorf("the fix on the branch: %q", got)
	}
	if !r.prompted(`Check "unit" failed`) {
		t.Error("the failing check never reached the model")
	}
	r.wait("the draft marked ready", func() bool { return slices.Contains(r.gh.Readied(), pr.Number) })
	if p := r.gh.Pulls("acme/app"); len(p) != 1 || p[0].Draft {
		t.Errorf("pull requests %+v: want the one, ready for review", p)
	}
}

// With the real Claude Code CLI: the base branch moves under the pull
// request so that it conflicts; ralph merges the base into the branch and
// the round's model, reading the conflicted file, writes it resolved; the
// pushed branch holds the base and no conflict markers.
func TestRequestConflictRoundWithClaude(t *testing.T) {
	r := newClaudeRequests(t)
	r.play(r.write("hello.txt", "hello\n"), claim("Added hello.txt."))
	pr := r.opened("Add a greeting", "Pull request: ")

	r.play(append(r.edit("hello.txt", "hello\nbonjour\n"), claim("Kept both greetings."))...)
	r.moveBase("hello.txt", "bonjour\n")
	r.pushedRound(pr.Number, 1)
	if got := r.show(pr.Head, "hello.txt"); got != "hello\nbonjour\n" {
		t.Errorf("the resolved file on the branch: %q", got)
	}
	if _, err := r.git("", "merge-base", "--is-ancestor", "main", pr.Head); err != nil {
		t.Errorf("the base is not in the branch: %v", err)
	}
	if !r.toolSaw("<<<<<<<") {
		t.Error("the model never read the conflict ralph's merge left")
	}
}

// With the real Claude Code CLI: a request whose loop budget
// (RALPH_REQUEST_MAX_LOOPS) runs out before the agent is done halts, and
// keeps what the model wrote: committed, pushed, in a draft pull request
// whose body says why it stopped.
func TestRequestCappedKeepsADraftWithClaude(t *testing.T) {
	r := newClaudeRequests(t, "RALPH_REQUEST_MAX_LOOPS=1")
	r.play(r.write("notes.txt", "half of it\n"),
		fakeapi.TextTurn("Half done.\n"+servetest.ClarityStatus("IN_PROGRESS", false, false, false, "", "Wrote the first half.")))
	n := r.file("Write it all", "Please.")
	halt := r.waitSaid(n, "Halted")
	pulls := r.gh.Pulls("acme/app")
	if len(pulls) != 1 || !pulls[0].Draft || !strings.Contains(halt, fmt.Sprintf("/pull/%d", pulls[0].Number)) {
		t.Fatalf("pull requests %+v after the halt %q: want one draft, linked", pulls, halt)
	}
	for _, want := range []string{"stopped before it was done", "max_loops"} {
		if !strings.Contains(pulls[0].Body, want) {
			t.Errorf("the draft's body lacks %q:\n%s", want, pulls[0].Body)
		}
	}
	if got := r.show(pulls[0].Head, "notes.txt"); got != "half of it\n" {
		t.Errorf("the model's work on the branch: %q", got)
	}
	if log, _ := r.git("", "log", "--format=%s", pulls[0].Head); !strings.Contains(log, "work in progress, stopped: max_loops") {
		t.Errorf("no commit of the stopped work: %s", log)
	}
}
