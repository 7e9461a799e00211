package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/fakeslack"
	"ralph/internal/faketelegram"
	"ralph/internal/github/githubtest"
	"ralph/internal/serve"
)

// needBwrap: missing locally the test skips, under CI=true it fails.
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is not installed; .ci/run installs it (scripts/install-test-deps.sh)")
		}
		t.Skip("bwrap is not installed")
	}
}

// boundaryAgent is a request's agent, a shell script: it tries every way
// to make the daemon's git run its program (which would write the
// environment it got to $CAPTURE), to read the daemon's home and its
// secrets, then does its own work with its own git and says it is done.
const boundaryAgent = `#!/bin/sh
cat >/dev/null
EVIL="env > $CAPTURE; true"
{
git config core.fsmonitor "$EVIL" && echo ESCAPE-fsmonitor
git config core.hooksPath "$(pwd)" && echo ESCAPE-hooksPath
echo '* filter=evil' > .gitattributes
git config filter.evil.clean "$EVIL" && echo ESCAPE-filter
git config core.sshCommand "$EVIL" && echo ESCAPE-sshCommand
git config core.pager "$EVIL" && echo ESCAPE-pager
printf '[core]\n\tfsmonitor = %s\n' "$EVIL" > evil.cfg
git config include.path "$(pwd)/evil.cfg" && echo ESCAPE-include
mkdir -p mine && git -C mine init -q && git -C mine config core.fsmonitor "$EVIL"
echo "gitdir: $(pwd)/mine/.git" > .git && echo ESCAPE-gitfile
rm -rf mine evil.cfg .gitattributes
echo /tmp > "$(git rev-parse --git-dir)/commondir" && echo ESCAPE-commondir
cat "$RALPH_HOME/api-token" "$RALPH_HOME/ralph.db" "$RALPH_HOME/serve.conf" && echo LEAK-home
ls -a "$RALPH_HOME" | sed 's/^/home-has:/'
env | grep -E '^(GITHUB_TOKEN|SLACK_BOT_TOKEN|SLACK_SIGNING_SECRET|TELEGRAM_BOT_TOKEN|RALPH_API_TOKEN|GITHUB_WEBHOOK_SECRET)=' && echo LEAK-env
ls "$RALPH_HOME/handoffs" | sed 's/^/handoffs-has:/' 
echo hello > hello.txt
git add hello.txt && git commit -qm "the agent's own commit" && echo own-commit
} > tried.txt 2>&1
printf 'Done.\n---CLARITY_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nFILES_MODIFIED: 1\nPR_READY: true\nCLARIFICATION_NEEDED: false\nCLARIFICATION_QUESTIONS:\nWORK_SUMMARY: added hello.txt\nRECOMMENDATION: review\n---END_CLARITY_STATUS---\n'
`

// A request's sandboxed agent, in a daemon whose environment holds its six
// secrets and whose home is a data directory outside the user's home
// (issue 23, findings 1, 4 and 9): none of its ways to have the daemon's
// git run a program works, and none of the daemon's secrets or files
// reaches it, while its own git commit does and ends in the pull request.
func TestServeSandboxedRequestReachesNothing(t *testing.T) {
	needBwrap(t)
	r := newRequestRig(t, script.Script{})
	// RALPH_HOME outside /tmp and the home directory, both of which the
	// sandbox hides anyway: a server's data directory.
	home, err := os.MkdirTemp(".", "ralph-home-")
	if err != nil {
		t.Fatal(err)
	}
	home, _ = filepath.Abs(home)
	t.Cleanup(func() { os.RemoveAll(home) })
	r.Home = home
	os.WriteFile(filepath.Join(home, "api-token"), []byte("api-token-file-canary\n"), 0o600)
	os.WriteFile(filepath.Join(home, "serve.conf"), []byte("# serve-conf-canary\n"), 0o600)
	agent := filepath.Join(r.Work, "bin", "agent.sh")
	os.MkdirAll(filepath.Dir(agent), 0o755)
	if err := os.WriteFile(agent, []byte(boundaryAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	capture := filepath.Join(r.Work, "captured-env")
	fs := fakeslack.Start(t, fakeslack.Options{BotToken: slackBot, AppToken: slackApp})
	tg := faketelegram.New(tgToken)
	t.Cleanup(tg.Close)
	secrets := map[string]string{
		"GITHUB_TOKEN": "ghp_secrettoken123", "GITHUB_WEBHOOK_SECRET": whSecret, "RALPH_API_TOKEN": "ralph-api-token-secret-1",
		"SLACK_BOT_TOKEN": slackBot, "SLACK_SIGNING_SECRET": slackSecret, "TELEGRAM_BOT_TOKEN": tgToken,
	}
	r.Env = append(r.Env, "RALPH_HOME="+home, "RALPH_REQUEST_SANDBOX=on", "CAPTURE="+capture,
		"RALPH_AGENT_PROVIDER=command", "RALPH_AGENT_CMD="+agent,
		"RALPH_API_TOKEN="+secrets["RALPH_API_TOKEN"],
		"SLACK_BOT_TOKEN="+slackBot, "SLACK_SIGNING_SECRET="+slackSecret, "SLACK_API_URL="+fs.URL,
		"RALPH_SLACK_REPO=acme/app", "RALPH_SLACK_CHANNELS=CALLOW", "RALPH_SLACK_USERS=UALICE",
		"TELEGRAM_BOT_TOKEN="+tgToken, "TELEGRAM_ALLOWED_CHATS=42", "TELEGRAM_API_URL="+tg.URL)
	r.Start(1)
	n := r.gh.AddIssue("acme/app", githubtest.Issue{Title: "Add a greeting file", Body: "Please add hello.txt.", Labels: []string{"ralph"}, Author: "alice"})
	r.waitComment(n, "Pull request: https://github.com/acme/app/pull/")
	v := r.WaitFor("gh-acme-app-1", "done", func(v serve.TaskView) bool { return v.PRURL != "" })
	if string(v.State) != "done" {
		t.Errorf("task %s", v.State)
	}

	if b, err := os.ReadFile(capture); err == nil {
		t.Fatalf("a program the agent planted ran on the host; it got:\n%s", b)
	}
	tried := r.Git("", "--git-dir", r.remote, "show", "ralph/github-1:tried.txt")
	t.Logf("what the agent saw:\n%s", tried)
	for _, bad := range []string{"ESCAPE", "LEAK", "canary", "home-has:api-token", "home-has:ralph.db", "home-has:serve.conf"} {
		if strings.Contains(tried, bad) {
			t.Errorf("inside the sandbox: %s", bad)
		}
	}
	for name, v := range secrets {
		if strings.Contains(tried, v) {
			t.Errorf("the agent saw %s", name)
		}
	}
	if !strings.Contains(tried, "own-commit") {
		t.Error("the agent's own git commit failed inside the sandbox")
	}
	if log := r.Git("", "--git-dir", r.remote, "log", "--format=%s", "ralph/github-1"); !strings.Contains(log, "the agent's own commit") {
		t.Errorf("the agent's commit is not in the pushed branch:\n%s", log)
	}
	if got := r.Git("", "--git-dir", r.remote, "show", "ralph/github-1:hello.txt"); got != "hello\n" {
		t.Errorf("pushed hello.txt: %q", got)
	}
}
