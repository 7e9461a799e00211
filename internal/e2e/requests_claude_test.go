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

// The daemon with the real Claude Code CLI on a GitHub request: a labelled
// issue becomes a pull request whose branch holds the file the model's
// Write call made in the request's worktree, and the issue gets the link.
func TestRequestBecomesPullRequestWithClaude(t *testing.T) {
	claude := agenttest.ClaudeBinary(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	// The request's worktree: RALPH_HOME/requests/work/<session>.
	worktree := filepath.Join(home, "requests", "work", "gh-acme-app-1")
	done := fakeapi.Iteration{Turns: []fakeapi.Turn{
		fakeapi.TextTurn("hello.txt is there.\n" + servetest.ClarityStatus("COMPLETE", true, true, false, "", "Added hello.txt."))}}
	srv := fakeapi.Start(t, fakeapi.Script{RepeatLast: true, Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Creating hello.txt.", "Write", map[string]string{"file_path": filepath.Join(worktree, "hello.txt"), "content": "hello, world\n"}),
			fakeapi.TextTurn("Added hello.txt.\n" + servetest.ClarityStatus("COMPLETE", true, true, false, "", "Added hello.txt.")),
		}},
		// The loop may ask once more before it believes the exit.
		done,
	}})

	const token = "ghp_e2etoken456"
	env := append(agenttest.ClaudeEnv(t, srv.URL), servetest.Vars(home)...)
	env = append(env, "RALPH_CLAUDE_TIMEOUT_MINUTES=2", "RALPH_API_TOKEN=", "MAX_CALLS_PER_HOUR=10000")

	// A bare repository is the remote the fake's clone_url names.
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
		"RALPH_GITHUB_REPOS=acme/app", "RALPH_GITHUB_POLL=200ms", "GITHUB_WEBHOOK_SECRET=e2e-webhook-secret",
		"RALPH_REQUEST_SANDBOX=off", fmt.Sprintf("CLAUDE_CODE_CMD=%q", claude))

	var log syncbuf.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
		}
	})
	servetest.Serve(t, &log, servetest.PlainRalph(t), env, "--home", home, "--listen", addr, "--max-parallel", "1", "--watch-interval", "0")

	n := gh.AddIssue("acme/app", githubtest.Issue{Title: "Add a greeting file", Body: "Please add hello.txt saying hello, world.",
		Labels: []string{"ralph"}, Author: "alice"})
	var link string
	for deadline := time.Now().Add(150 * time.Second); link == "" && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		for _, c := range gh.Comments("acme/app", n) {
			if strings.Contains(c.Body, "Pull request: ") {
				link = c.Body
			}
		}
	}
	if link == "" {
		t.Fatalf("no pull request link on #%d; comments: %+v", n, gh.Comments("acme/app", n))
	}
	pulls := gh.Pulls("acme/app")
	branch := fmt.Sprintf("ralph/github-%d", n)
	if len(pulls) != 1 || pulls[0].Head != branch || pulls[0].Base != "main" || !strings.Contains(pulls[0].Body, fmt.Sprintf("Closes #%d", n)) {
		t.Fatalf("pull requests: %+v", pulls)
	}
	if !strings.Contains(link, fmt.Sprintf("https://github.com/acme/app/pull/%d", pulls[0].Number)) {
		t.Errorf("the link comment names another pull request: %q", link)
	}
	if got, err := servetest.Git("", env, "--git-dir", remote, "show", branch+":hello.txt"); err != nil || got != "hello, world\n" {
		t.Errorf("pushed hello.txt: %q %v", got, err)
	}
	// The file came from Claude's Write tool call, sent to the model's API.
	wrote := false
	for _, req := range srv.MessageRequests() {
		if req.Iteration == 0 && req.Turn == 1 {
			wrote = true
		}
	}
	if !wrote {
		t.Error("Claude never returned the Write tool's result to the model")
	}
	for _, c := range gh.Comments("acme/app", n) {
		if strings.Contains(c.Body, token) {
			t.Errorf("the token in a comment: %q", c.Body)
		}
	}
	if strings.Contains(log.String(), token) {
		t.Error("the token in the daemon's log")
	}
}
