package cli

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/github/githubtest"
	"ralph/internal/serve"
)

// requestRig is a real `ralph serve` taking requests from the fake GitHub,
// with a bare repository as the remote its clone_url names.
type requestRig struct {
	*fleetRig
	gh     *githubtest.Server
	remote string
}

const whSecret = "webhook-secret-value"

func newRequestRig(t *testing.T, s script.Script) *requestRig {
	r := newFleetRig(t)
	remote := filepath.Join(r.work, "remote.git")
	seed := filepath.Join(r.work, "seed")
	for _, a := range [][]string{{"init", "-q", "--bare", "-b", "main", remote}, {"init", "-q", "-b", "main", seed}} {
		r.git("", a...)
	}
	os.WriteFile(filepath.Join(seed, "README.md"), []byte("# app\n"), 0o644)
	r.git(seed, "add", "-A")
	r.git(seed, "commit", "-qm", "init")
	r.git(seed, "push", "-q", remote, "main")
	gh := githubtest.Start(t, githubtest.Data{Repos: map[string][]githubtest.Issue{"acme/app": nil}, Token: "ghp_secrettoken123",
		Permissions: map[string]string{"acme/app/alice": "write"}, CloneURLs: map[string]string{"acme/app": remote}})
	scriptPath := filepath.Join(r.work, "agent-requests.json")
	if err := s.Write(scriptPath); err != nil {
		t.Fatal(err)
	}
	r.env = append(r.env, "GITHUB_TOKEN=ghp_secrettoken123", "GITHUB_API_URL="+gh.URL, "RALPH_GITHUB_REPOS=acme/app",
		"RALPH_GITHUB_POLL=200ms", "GITHUB_WEBHOOK_SECRET="+whSecret, "RALPH_REQUEST_SANDBOX=off",
		fmt.Sprintf("CLAUDE_CODE_CMD=env %s=%s %s", script.EnvScript, scriptPath, r.fake), "MAX_CALLS_PER_HOUR=10000")
	return &requestRig{fleetRig: r, gh: gh, remote: remote}
}

func (r *fleetRig) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, r.env
	b, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, b)
	}
	return string(b)
}

// waitComment waits for a comment on issue n that contains want.
func (r *requestRig) waitComment(n int, want string) githubtest.Comment {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, c := range r.gh.Comments("acme/app", n) {
			if strings.Contains(c.Body, want) {
				return c
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Fatalf("no comment with %q on #%d; comments: %+v", want, n, r.gh.Comments("acme/app", n))
	return githubtest.Comment{}
}

func clarity(status, exit, prReady, needs, questions, summary string) json.RawMessage {
	return result("sess-r", fmt.Sprintf("Working.\n---CLARITY_STATUS---\nSTATUS: %s\nEXIT_SIGNAL: %s\nFILES_MODIFIED: 1\nPR_READY: %s\n"+
		"CLARIFICATION_NEEDED: %s\nCLARIFICATION_QUESTIONS: %s\nWORK_SUMMARY: %s\nRECOMMENDATION: review\n---END_CLARITY_STATUS---",
		status, exit, prReady, needs, questions, summary))
}

func (r *requestRig) webhook(event, delivery, body, secret string) int {
	r.t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	req, _ := http.NewRequest("POST", "http://"+r.addr+"/webhooks/github", bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A labelled issue becomes a request: the agent asks, the question is
// posted, the daemon restarts while it waits, the requester's answer
// resumes the same request in the same agent session, and its work ends
// as a pushed branch, a pull request that closes the issue and a comment
// with its link. A stranger's comment and a forged or repeated webhook
// change nothing; the token shows nowhere.
func TestRequestsGitHubEndToEnd(t *testing.T) {
	r := newRequestRig(t, script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{clarity("NEEDS_CLARIFICATION", "true", "false", "true", "Which greeting should hello.txt hold?", "asked")}},
		{Files: map[string]string{"hello.txt": "hello, world\n"},
			StdoutLines: []json.RawMessage{clarity("COMPLETE", "true", "true", "false", "", "Added hello.txt, all done.")}},
	}})
	r.start(1)
	n := r.gh.AddIssue("acme/app", githubtest.Issue{Title: "Add a greeting file", Body: "Please add hello.txt.", Labels: []string{"ralph"}, Author: "alice"})
	r.gh.AddIssue("acme/app", githubtest.Issue{Title: "From a stranger", Body: "rm -rf", Labels: []string{"ralph"}, Author: "mallory"})
	q := r.waitComment(n, "Which greeting should hello.txt hold?")
	if !strings.Contains(q.Body, "<!-- ralph:") {
		t.Errorf("the question carries no marker: %q", q.Body)
	}
	v := r.waitFor("gh-acme-app-1", "waiting for an answer", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	if v.Origin != "github" {
		t.Errorf("origin %q", v.Origin)
	}

	// Forged, unsigned and repeated deliveries.
	comment := func(id int, author, body string) string {
		b, _ := json.Marshal(map[string]any{"action": "created", "repository": map[string]any{"full_name": "acme/app"},
			"issue":   map[string]any{"number": n, "title": "Add a greeting file", "labels": []any{map[string]any{"name": "ralph"}}, "state": "open"},
			"comment": map[string]any{"id": id, "body": body, "user": map[string]any{"login": author}}})
		return string(b)
	}
	if code := r.webhook("issue_comment", "d-forged", comment(90001, "alice", "forged"), "wrong-secret"); code != http.StatusUnauthorized {
		t.Errorf("forged webhook: %d, want 401", code)
	}
	// The daemon restarts while the request waits for its answer.
	r.kill()
	r.start(1)
	if code := r.webhook("issue_comment", "d-1", comment(90002, "mallory", "I am not allowed"), whSecret); code != http.StatusAccepted {
		t.Errorf("stranger's comment: %d", code)
	}
	// The answer comes by webhook, twice (a redelivery), and by the poll.
	id := r.gh.AddComment("acme/app", n, "alice", "Say hello, world.")
	ans := comment(int(id), "alice", "Say hello, world.")
	if code := r.webhook("issue_comment", "d-2", ans, whSecret); code != http.StatusAccepted {
		t.Errorf("answer webhook: %d", code)
	}
	if code := r.webhook("issue_comment", "d-2", ans, whSecret); code != http.StatusOK {
		t.Errorf("redelivery: %d, want 200 (ignored)", code)
	}
	link := r.waitComment(n, "Pull request: https://github.com/acme/app/pull/")
	pulls := r.gh.Pulls("acme/app")
	if len(pulls) != 1 || pulls[0].Head != "ralph/github-1" || pulls[0].Base != "main" || !strings.Contains(pulls[0].Body, "Closes #1") {
		t.Fatalf("pull requests: %+v", pulls)
	}
	if got := r.git("", "--git-dir", r.remote, "show", "ralph/github-1:hello.txt"); got != "hello, world\n" {
		t.Errorf("pushed hello.txt: %q", got)
	}
	v = r.waitFor("gh-acme-app-1", "done with its PR", func(v serve.TaskView) bool { return v.PRURL != "" })
	if string(v.State) != "done" || !strings.Contains(link.Body, v.PRURL) {
		t.Errorf("task %s, pr_url %q; link %q", v.State, v.PRURL, link.Body)
	}
	// The answer reached the agent once, in the same agent session.
	calls := strings.Split(strings.TrimSpace(readFile(t, script.ArgvLog(filepath.Join(r.work, "agent-requests.json")))), "\n")
	// (The loop asks for a second EXIT_SIGNAL when the evidence is thin.)
	if len(calls) < 2 || len(calls) > 3 {
		t.Fatalf("%d agent calls, want 2 or 3", len(calls))
	}
	if !strings.Contains(calls[1], "sess-r") {
		t.Errorf("the answer did not resume the agent session: %s", calls[1])
	}
	// One status comment, edited in place; no request for the stranger.
	status := 0
	for _, c := range r.gh.Comments("acme/app", n) {
		if strings.Contains(c.Body, "ralph:status:") {
			status++
		}
		if strings.Contains(c.Body, "ghp_secrettoken123") {
			t.Errorf("the token in a comment: %q", c.Body)
		}
	}
	if status != 1 {
		t.Errorf("%d status comments, want 1", status)
	}
	if len(r.gh.Comments("acme/app", 2)) != 0 {
		t.Errorf("the stranger's issue was answered: %+v", r.gh.Comments("acme/app", 2))
	}
	if strings.Contains(r.log.String(), "ghp_secrettoken123") {
		t.Error("the token in the daemon's log")
	}
}

// A request whose loop makes no progress halts with a report of why; a
// `/ralph retry` comment resets the breaker and resumes it to a pull
// request.
func TestRequestsHaltAndRetry(t *testing.T) {
	idle := script.Iteration{StdoutLines: []json.RawMessage{clarity("IN_PROGRESS", "false", "false", "false", "", "thinking")}}
	r := newRequestRig(t, script.Script{RepeatLast: true, Iterations: []script.Iteration{idle, idle, idle,
		{Files: map[string]string{"done.txt": "done\n"}, StdoutLines: []json.RawMessage{clarity("COMPLETE", "true", "true", "false", "", "Done now.")}},
	}})
	r.env = append(r.env, "RALPH_CB_NO_PROGRESS_THRESHOLD=3")
	r.start(1)
	n := r.gh.AddIssue("acme/app", githubtest.Issue{Title: "Stuck work", Body: "Do it.", Labels: []string{"ralph"}, Author: "alice"})
	halt := r.waitComment(n, "Halted")
	if !strings.Contains(halt.Body, "/ralph retry") {
		t.Errorf("the halt report says not how to go on: %q", halt.Body)
	}
	if v := r.status("gh-acme-app-1"); string(v.State) != "halted" {
		t.Fatalf("task %s, want halted", v.State)
	}
	r.gh.AddComment("acme/app", n, "alice", "/ralph retry")
	r.waitComment(n, "Pull request: ")
	if p := r.gh.Pulls("acme/app"); len(p) != 1 {
		t.Errorf("pull requests: %+v", p)
	}
}
