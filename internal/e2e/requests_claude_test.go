package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// The daemon with the real Claude Code CLI on a GitHub request: a labelled
// issue becomes a pull request whose branch holds the file the model's
// Write call made in the request's worktree, and the issue gets the link.
func TestRequestBecomesPullRequestWithClaude(t *testing.T) {
	r := newClaudeRequests(t)
	r.play(r.write("hello.txt", "hello, world\n"), claim("Added hello.txt."))
	n := r.file("Add a greeting file", "Please add hello.txt saying hello, world.")
	link := r.waitSaid(n, "Pull request: ")
	pulls := r.gh.Pulls("acme/app")
	branch := fmt.Sprintf("ralph/github-%d", n)
	if len(pulls) != 1 || pulls[0].Head != branch || pulls[0].Base != "main" || !strings.Contains(pulls[0].Body, fmt.Sprintf("Closes #%d", n)) {
		t.Fatalf("pull requests: %+v", pulls)
	}
	if !strings.Contains(link, fmt.Sprintf("https://github.com/acme/app/pull/%d", pulls[0].Number)) {
		t.Errorf("the link comment names another pull request: %q", link)
	}
	if got := r.show(branch, "hello.txt"); got != "hello, world\n" {
		t.Errorf("pushed hello.txt: %q", got)
	}
	// The file came from Claude's Write tool call, sent to the model's API.
	wrote := false
	for _, req := range r.api.MessageRequests() {
		if req.Iteration == 0 && req.Turn == 1 {
			wrote = true
		}
	}
	if !wrote {
		t.Error("Claude never returned the Write tool's result to the model")
	}
	for _, c := range r.gh.Comments("acme/app", n) {
		if strings.Contains(c.Body, requestToken) {
			t.Errorf("the token in a comment: %q", c.Body)
		}
	}
	if strings.Contains(r.log.String(), requestToken) {
		t.Error("the token in the daemon's log")
	}
}
