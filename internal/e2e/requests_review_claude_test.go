package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/github/githubtest"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
)

// The daemon with the real Claude Code CLI following its pull request: a
// reviewer with write access comments on a line of the diff; the request's
// task runs a follow-up round in which the model's Write call changes the
// file; ralph pushes the round's commit to the pull request's branch,
// replies in the review thread and resolves it, and the task waits for
// review again.
func TestRequestReviewRoundWithClaude(t *testing.T) {
	claude := agenttest.ClaudeBinary(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	worktree := filepath.Join(home, "requests", "work", "gh-acme-app-1")
	write := func(content, summary string) fakeapi.Iteration {
		return fakeapi.Iteration{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Writing hello.txt.", "Write", map[string]string{"file_path": filepath.Join(worktree, "hello.txt"), "content": content}),
			fakeapi.TextTurn(summary + "\n" + servetest.ClarityStatus("COMPLETE", true, true, false, "", summary)),
		}}
	}
	// The first claim stands at once; the round's claim is made twice (its
	// checklist item is open), the second time by the repeated last one.
	srv := fakeapi.Start(t, fakeapi.Script{RepeatLast: true, Iterations: []fakeapi.Iteration{
		write("hello\n", "Added hello.txt."),
		write("hello, reviewer\n", "The greeting names the reviewer."),
		{Turns: []fakeapi.Turn{fakeapi.TextTurn("Done.\n" + servetest.ClarityStatus("COMPLETE", true, true, false, "", "The greeting names the reviewer."))}},
	}})

	const token = "ghp_e2etoken789"
	env := append(agenttest.ClaudeEnv(t, srv.URL), servetest.Vars(home)...)
	env = append(env, "RALPH_CLAUDE_TIMEOUT_MINUTES=2", "RALPH_API_TOKEN=", "MAX_CALLS_PER_HOUR=10000")
	remote, err := servetest.Remote(work, env)
	if err != nil {
		t.Fatal(err)
	}
	gh := githubtest.Start(t, githubtest.Data{Repos: map[string][]githubtest.Issue{"acme/app": nil}, Token: token,
		Permissions: map[string]string{"acme/app/alice": "write"}, CloneURLs: map[string]string{"acme/app": remote}})
	addr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	env = append(env, "RALPH_SERVER=http://"+addr, "GITHUB_TOKEN="+token, "GITHUB_API_URL="+gh.URL,
		"RALPH_GITHUB_REPOS=acme/app", "RALPH_GITHUB_POLL=200ms", "RALPH_REQUEST_SANDBOX=off", fmt.Sprintf("CLAUDE_CODE_CMD=%q", claude))
	var log syncbuf.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
		}
	})
	servetest.Serve(t, &log, servetest.PlainRalph(t), env, "--home", home, "--listen", addr, "--max-parallel", "1", "--watch-interval", "0")

	wait := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			if cond() {
				return
			}
		}
		t.Fatalf("never %s", what)
	}
	n := gh.AddIssue("acme/app", githubtest.Issue{Title: "Add a greeting file", Body: "Please add hello.txt.", Labels: []string{"ralph"}, Author: "alice"})
	wait("a pull request", func() bool { return len(gh.Pulls("acme/app")) == 1 })
	pr := gh.Pulls("acme/app")[0].Number
	wait("the pull request's link", func() bool { return strings.Contains(fmt.Sprint(gh.Comments("acme/app", n)), "Pull request: ") })

	c := gh.AddReviewComment("acme/app", pr, githubtest.ReviewComment{Author: "alice", Body: "Greet the reviewer.", Path: "hello.txt", Line: 1})
	reply := func() string {
		for _, rc := range gh.ReviewComments("acme/app", pr) {
			if rc.InReplyTo == c && rc.Author == "ralph-bot" {
				return rc.Body
			}
		}
		return ""
	}
	wait("a reply in the review thread", func() bool { return reply() != "" })
	if !strings.Contains(reply(), "Addressed in") || !gh.Resolved("acme/app", pr, c) {
		t.Errorf("reply %q, resolved %v: want the thread answered and resolved", reply(), gh.Resolved("acme/app", pr, c))
	}
	branch := fmt.Sprintf("ralph/github-%d", n)
	if got, err := servetest.Git("", env, "--git-dir", remote, "show", branch+":hello.txt"); err != nil || got != "hello, reviewer\n" {
		t.Errorf("the round's change on the branch: %q %v", got, err)
	}
	// The review comment reached the model in the round's prompt.
	seen := false
	for _, req := range srv.MessageRequests() {
		if req.Messages == nil {
			continue
		}
		for _, p := range req.Messages.Prompts() {
			seen = seen || strings.Contains(p, "Greet the reviewer.")
		}
	}
	if !seen {
		t.Error("the review comment never reached the model")
	}
}
