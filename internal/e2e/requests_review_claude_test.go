package e2e

import (
	"strings"
	"testing"

	"ralph/internal/github/githubtest"
)

// The daemon with the real Claude Code CLI following its pull request: a
// reviewer with write access comments on a line of the diff; the request's
// task runs a follow-up round in which the model's Write call changes the
// file; ralph pushes the round's commit to the pull request's branch,
// replies in the review thread and resolves it, and the task waits for
// review again.
func TestRequestReviewRoundWithClaude(t *testing.T) {
	r := newClaudeRequests(t)
	r.play(r.write("hello.txt", "hello\n"), claim("Added hello.txt."))
	pr := r.opened("Add a greeting file", "Pull request: ")

	r.play(append(r.edit("hello.txt", "hello, reviewer\n"), claim("The greeting names the reviewer."))...)
	c := r.gh.AddReviewComment("acme/app", pr.Number, githubtest.ReviewComment{Author: "alice", Body: "Greet the reviewer.", Path: "hello.txt", Line: 1})
	reply := func() string {
		for _, rc := range r.gh.ReviewComments("acme/app", pr.Number) {
			if rc.InReplyTo == c && rc.Author == "ralph-bot" {
				return rc.Body
			}
		}
		return ""
	}
	r.wait("a reply in the review thread", func() bool { return reply() != "" })
	if !strings.Contains(reply(), "Addressed in") || !r.gh.Resolved("acme/app", pr.Number, c) {
		t.Errorf("reply %q, resolved %v: want the thread answered and resolved", reply(), r.gh.Resolved("acme/app", pr.Number, c))
	}
	if got := r.show(pr.Head, "hello.txt"); got != "hello, reviewer\n" {
		t.Errorf("the round's change on the branch: %q", got)
	}
	if !r.prompted("Greet the reviewer.") {
		t.Error("the review comment never reached the model")
	}
}
