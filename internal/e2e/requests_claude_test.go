package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/github/githubtest"
	"ralph/internal/syncbuf"
)

// clarityBlock is the status block a request's agent ends its answer with.
func clarityBlock(status string, exit, prReady bool, summary string) string {
	return fmt.Sprintf("\n\n---CLARITY_STATUS---\nSTATUS: %s\nEXIT_SIGNAL: %v\nFILES_MODIFIED: 1\nPR_READY: %v\n"+
		"CLARIFICATION_NEEDED: false\nCLARIFICATION_QUESTIONS: \nWORK_SUMMARY: %s\nRECOMMENDATION: review\n---END_CLARITY_STATUS---",
		status, exit, prReady, summary)
}

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
		fakeapi.TextTurn("hello.txt is there." + clarityBlock("COMPLETE", true, true, "Added hello.txt."))}}
	srv := fakeapi.Start(t, fakeapi.Script{RepeatLast: true, Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Creating hello.txt.", "Write", map[string]string{"file_path": filepath.Join(worktree, "hello.txt"), "content": "hello, world\n"}),
			fakeapi.TextTurn("Added hello.txt." + clarityBlock("COMPLETE", true, true, "Added hello.txt.")),
		}},
		// The loop may ask once more before it believes the exit.
		done,
	}})

	const token = "ghp_e2etoken456"
	env := append(agenttest.ClaudeEnv(t, srv.URL), "RALPH_DELAY=0", "RALPH_FAILURE_BACKOFF=0", "RALPH_CLAUDE_TIMEOUT_MINUTES=2",
		"RALPH_HOME="+home, "RALPH_API_TOKEN=", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "MAX_CALLS_PER_HOUR=10000")

	// A bare repository is the remote the fake's clone_url names.
	remote := filepath.Join(work, "remote.git")
	seed := filepath.Join(work, "seed")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("", "init", "-q", "--bare", "-b", "main", remote)
	git("", "init", "-q", "-b", "main", seed)
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("# app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(seed, "add", "-A")
	git(seed, "commit", "-qm", "init")
	git(seed, "push", "-q", remote, "main")

	gh := githubtest.Start(t, githubtest.Data{Repos: map[string][]githubtest.Issue{"acme/app": nil}, Token: token,
		Permissions: map[string]string{"acme/app/alice": "write"}, CloneURLs: map[string]string{"acme/app": remote}})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env = append(env, "RALPH_SERVER=http://"+addr, "GITHUB_TOKEN="+token, "GITHUB_API_URL="+gh.URL,
		"RALPH_GITHUB_REPOS=acme/app", "RALPH_GITHUB_POLL=200ms", "GITHUB_WEBHOOK_SECRET=e2e-webhook-secret",
		"RALPH_REQUEST_SANDBOX=off", fmt.Sprintf("CLAUDE_CODE_CMD=%q", claude))

	var log syncbuf.Buffer
	daemon := exec.Command(ralphBin, "serve", "--home", home, "--listen", addr, "--max-parallel", "1", "--watch-interval", "0")
	daemon.Env, daemon.Stdout, daemon.Stderr = env, &log, &log
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		daemon.Process.Signal(syscall.SIGTERM)
		daemon.Wait()
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
		}
	})

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
	if got := git("", "--git-dir", remote, "show", branch+":hello.txt"); got != "hello, world\n" {
		t.Errorf("pushed hello.txt: %q", got)
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
