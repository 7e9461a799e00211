package e2e

import (
	"fmt"
	"os"
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

// claudeRequests is a real `ralph serve` taking requests from the fake
// GitHub, whose agent is the real Claude Code CLI against the fake model
// API, with a bare repository as the remote the fake's clone_url names.
// The test plays the model one phase of its story at a time (play): what
// the agent does for the issue, then for a reviewer, a check or the base.
type claudeRequests struct {
	t      *testing.T
	api    *fakeapi.Server
	gh     *githubtest.Server
	env    []string
	home   string
	remote string
	// seed is a clone of the remote's main branch, for the test to move
	// the base under a pull request.
	seed string
	log  *syncbuf.Buffer
	addr string // the daemon's listen address
}

const requestToken = "ghp_e2etoken789"

// newClaudeRequests starts the daemon with extra settings (NAME=value);
// its model has no script yet: play one before filing an issue.
func newClaudeRequests(t *testing.T, extra ...string) *claudeRequests {
	t.Helper()
	claude := agenttest.ClaudeBinary(t)
	work := t.TempDir()
	r := &claudeRequests{t: t, api: fakeapi.Start(t, fakeapi.Script{}), home: filepath.Join(work, "home"),
		seed: filepath.Join(work, "seed"), log: &syncbuf.Buffer{}}
	env := append(agenttest.ClaudeEnv(t, r.api.URL), servetest.Vars(r.home)...)
	env = append(env, "RALPH_CLAUDE_TIMEOUT_MINUTES=2", "RALPH_API_TOKEN=", "MAX_CALLS_PER_HOUR=10000")
	var err error
	if r.remote, err = servetest.Remote(work, env); err != nil {
		t.Fatal(err)
	}
	r.gh = githubtest.Start(t, githubtest.Data{Repos: map[string][]githubtest.Issue{"acme/app": nil}, Token: requestToken,
		Permissions: map[string]string{"acme/app/alice": "write"}, CloneURLs: map[string]string{"acme/app": r.remote}})
	addr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	r.addr = addr
	r.env = append(append(env, "RALPH_SERVER=http://"+addr, "GITHUB_TOKEN="+requestToken, "GITHUB_API_URL="+r.gh.URL,
		"RALPH_GITHUB_REPOS=acme/app", "RALPH_GITHUB_POLL=200ms", "GITHUB_WEBHOOK_SECRET=e2e-webhook-secret",
		"RALPH_REQUEST_SANDBOX=off", fmt.Sprintf("CLAUDE_CODE_CMD=%q", claude)), extra...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", r.log.String())
		}
	})
	servetest.Serve(t, r.log, servetest.PlainRalph(t), r.env, "--home", r.home, "--listen", addr, "--max-parallel", "1", "--watch-interval", "0")
	return r
}

// path is where name lies in the worktree of the first request (its
// session gh-acme-app-1): the model's tools take absolute paths.
func (r *claudeRequests) path(name string) string {
	return filepath.Join(r.home, "requests", "work", "gh-acme-app-1", name)
}

// play makes every later call of the agent play turns, whatever the
// calls before it.
func (r *claudeRequests) play(turns ...fakeapi.Turn) {
	r.t.Helper()
	if err := r.api.Play(fakeapi.Script{RepeatLast: true, Iterations: []fakeapi.Iteration{{Turns: turns}}}); err != nil {
		r.t.Fatal(err)
	}
}

// write is the model's Write call of name in the request's worktree.
func (r *claudeRequests) write(name, content string) fakeapi.Turn {
	return fakeapi.ToolTurn("Writing "+name+".", "Write", map[string]string{"file_path": r.path(name), "content": content})
}

// edit is a Read of name, then a Write: Claude Code writes over a file
// only once it was read in the session.
func (r *claudeRequests) edit(name, content string) []fakeapi.Turn {
	read := fakeapi.ToolTurn("Reading "+name+".", "Read", map[string]string{"file_path": r.path(name)})
	return []fakeapi.Turn{read, r.write(name, content)}
}

// claim is the model's last word: done, ready for review.
func claim(summary string) fakeapi.Turn {
	return fakeapi.TextTurn(summary + "\n" + servetest.ClarityStatus("COMPLETE", true, true, false, "", summary))
}

// file files a labelled issue by alice, who may write to the repository.
func (r *claudeRequests) file(title, body string) int {
	return r.gh.AddIssue("acme/app", githubtest.Issue{Title: title, Body: body, Labels: []string{"ralph"}, Author: "alice"})
}

// wait waits for cond, for two and a half minutes at the most.
func (r *claudeRequests) wait(what string, cond func() bool) {
	r.t.Helper()
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if cond() {
			return
		}
	}
	r.t.Fatalf("never %s", what)
}

// said is the first comment on issue or pull request n that contains
// want ("" when none does).
func (r *claudeRequests) said(n int, want string) string {
	for _, c := range r.gh.Comments("acme/app", n) {
		if strings.Contains(c.Body, want) {
			return c.Body
		}
	}
	return ""
}

// waitSaid waits for a comment on n that contains want and returns it.
func (r *claudeRequests) waitSaid(n int, want string) string {
	r.t.Helper()
	r.wait(fmt.Sprintf("a comment with %q on #%d", want, n), func() bool { return r.said(n, want) != "" })
	return r.said(n, want)
}

// opened files an issue and waits for its pull request and the comment
// that links it (text in it); the pull request.
func (r *claudeRequests) opened(title, text string) githubtest.Pull {
	r.t.Helper()
	n := r.file(title, "Please.")
	r.waitSaid(n, text)
	pulls := r.gh.Pulls("acme/app")
	if len(pulls) != 1 {
		r.t.Fatalf("pull requests: %+v, want one", pulls)
	}
	return pulls[0]
}

// pushedRound waits for the note of follow-up round n on pull request pr.
func (r *claudeRequests) pushedRound(pr, n int) {
	r.t.Helper()
	r.waitSaid(pr, fmt.Sprintf("Follow-up round %d pushed", n))
}

// git runs git with the daemon's environment: in dir, or on the remote
// when dir is "".
func (r *claudeRequests) git(dir string, args ...string) (string, error) {
	if dir == "" {
		args = append([]string{"--git-dir", r.remote}, args...)
	}
	return servetest.Git(dir, r.env, args...)
}

// show is name on the remote's branch ("" when it is not there).
func (r *claudeRequests) show(branch, name string) string {
	out, err := r.git("", "show", branch+":"+name)
	if err != nil {
		return ""
	}
	return out
}

// moveBase commits name with content on the remote's main branch, as
// another person's merged work would.
func (r *claudeRequests) moveBase(name, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.seed, name), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	for _, args := range [][]string{{"add", name}, {"-c", "user.name=bob", "-c", "user.email=bob@example.com", "commit", "-qm", "change " + name}, {"push", "-q", r.remote, "main"}} {
		if _, err := r.git(r.seed, args...); err != nil {
			r.t.Fatal(err)
		}
	}
}

// prompted says whether a prompt the model was sent holds text.
func (r *claudeRequests) prompted(text string) bool {
	for _, req := range r.api.MessageRequests() {
		for _, p := range req.Messages.Prompts() {
			if strings.Contains(p, text) {
				return true
			}
		}
	}
	return false
}

// toolSaw says whether a tool's result the model was sent holds text.
func (r *claudeRequests) toolSaw(text string) bool {
	for _, req := range r.api.MessageRequests() {
		for _, m := range req.Messages.Conversation() {
			for _, b := range m.Content.ToolResults() {
				if strings.Contains(b.Content.Text(), text) {
					return true
				}
			}
		}
	}
	return false
}
