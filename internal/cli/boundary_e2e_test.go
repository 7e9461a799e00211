package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/github/githubtest"
	"ralph/internal/requests/slacktest"
	"ralph/internal/serve"
	"ralph/internal/telegram/telegramtest"
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
[ -n "$WORKER_HOME" ] && { cat "$WORKER_HOME"/* ; ls -A "$WORKER_HOME" | sed 's/^/worker-home-has:/'; echo worker-home-looked; }
env | grep -E '^(GITHUB_TOKEN|SLACK_BOT_TOKEN|SLACK_SIGNING_SECRET|TELEGRAM_BOT_TOKEN|RALPH_API_TOKEN|GITHUB_WEBHOOK_SECRET)=' && echo LEAK-env
ls "$RALPH_HOME/handoffs" | sed 's/^/handoffs-has:/' 
echo hello > hello.txt
git add hello.txt && git commit -qm "the agent's own commit" && echo own-commit
} > tried.txt 2>&1
printf 'Done.\n---CLARITY_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nFILES_MODIFIED: 1\nPR_READY: true\nCLARIFICATION_NEEDED: false\nCLARIFICATION_QUESTIONS:\nWORK_SUMMARY: added hello.txt\nRECOMMENDATION: review\n---END_CLARITY_STATUS---\n'
`

// boundaryRig is the request rig with the daemon's six secrets in its
// environment, its home a data directory outside the user's home and
// /tmp (both hidden by the sandbox anyway: this one only by ralph's
// hiding), requests sandboxed, and boundaryAgent as the agent.
type boundaryRig struct {
	*requestRig
	capture string
	secrets map[string]string
}

func newBoundaryRig(t *testing.T) *boundaryRig {
	needBwrap(t)
	r := newRequestRig(t, script.Script{})
	home := outsideTmp(t, "ralph-home-")
	r.Home = home
	os.WriteFile(filepath.Join(home, "api-token"), []byte("api-token-file-canary\n"), 0o600)
	os.WriteFile(filepath.Join(home, "serve.conf"), []byte("# serve-conf-canary\n"), 0o600)
	agent := filepath.Join(r.Work, "bin", "agent.sh")
	os.MkdirAll(filepath.Dir(agent), 0o755)
	if err := os.WriteFile(agent, []byte(boundaryAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	b := &boundaryRig{requestRig: r, capture: filepath.Join(r.Work, "captured-env")}
	fs := slacktest.Start(t, slacktest.Options{BotToken: slackBot, AppToken: slackApp})
	tg := telegramtest.New(tgToken)
	t.Cleanup(tg.Close)
	b.secrets = map[string]string{
		"GITHUB_TOKEN": "ghp_secrettoken123", "GITHUB_WEBHOOK_SECRET": whSecret, "RALPH_API_TOKEN": "ralph-api-token-secret-1",
		"SLACK_BOT_TOKEN": slackBot, "SLACK_SIGNING_SECRET": slackSecret, "TELEGRAM_BOT_TOKEN": tgToken,
	}
	r.Env = append(r.Env, "RALPH_HOME="+home, "RALPH_REQUEST_SANDBOX=on", "CAPTURE="+b.capture,
		"RALPH_AGENT_PROVIDER=command", "RALPH_AGENT_CMD="+agent,
		"RALPH_API_TOKEN="+b.secrets["RALPH_API_TOKEN"],
		"SLACK_BOT_TOKEN="+slackBot, "SLACK_SIGNING_SECRET="+slackSecret, "SLACK_API_URL="+fs.URL,
		"RALPH_SLACK_REPO=acme/app", "RALPH_SLACK_CHANNELS=CALLOW", "RALPH_SLACK_USERS=UALICE",
		"TELEGRAM_BOT_TOKEN="+tgToken, "TELEGRAM_ALLOWED_CHATS=42", "TELEGRAM_API_URL="+tg.URL)
	return b
}

// outsideTmp is a directory in the package's own, neither under /tmp nor
// under the test's HOME.
func outsideTmp(t *testing.T, prefix string) string {
	d, err := os.MkdirTemp(".", prefix)
	if err != nil {
		t.Fatal(err)
	}
	d, _ = filepath.Abs(d)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// request opens the issue and checks the request as it ends: a pull
// request, no program of the agent run on the host, nothing of the
// daemon's seen inside, the agent's own commit pushed. more are
// canaries that must not show either.
func (b *boundaryRig) request(more ...string) string {
	t := b.T
	n := b.gh.AddIssue("acme/app", githubtest.Issue{Title: "Add a greeting file", Body: "Please add hello.txt.", Labels: []string{"ralph"}, Author: "alice"})
	b.waitComment(n, "Pull request: https://github.com/acme/app/pull/")
	// Its pull request open, the task waits for review.
	b.WaitFor("gh-acme-app-1", "waiting for review", func(v serve.TaskView) bool { return v.PRURL != "" && reviewing(v) })
	if got, err := os.ReadFile(b.capture); err == nil {
		t.Fatalf("a program the agent planted ran on the host; it got:\n%s", got)
	}
	tried := b.Git("", "--git-dir", b.remote, "show", "ralph/github-1:tried.txt")
	t.Logf("what the agent saw:\n%s", tried)
	for _, bad := range append([]string{"ESCAPE", "LEAK", "canary", "home-has:api-token", "home-has:ralph.db", "home-has:serve.conf"}, more...) {
		if strings.Contains(tried, bad) {
			t.Errorf("inside the sandbox: %s", bad)
		}
	}
	for name, v := range b.secrets {
		if strings.Contains(tried, v) {
			t.Errorf("the agent saw %s", name)
		}
	}
	if !strings.Contains(tried, "own-commit") {
		t.Error("the agent's own git commit failed inside the sandbox")
	}
	if log := b.Git("", "--git-dir", b.remote, "log", "--format=%s", "ralph/github-1"); !strings.Contains(log, "the agent's own commit") {
		t.Errorf("the agent's commit is not in the pushed branch:\n%s", log)
	}
	if got := b.Git("", "--git-dir", b.remote, "show", "ralph/github-1:hello.txt"); got != "hello\n" {
		t.Errorf("pushed hello.txt: %q", got)
	}
	return tried
}

// A request's sandboxed agent, in a daemon whose environment holds its six
// secrets and whose home is a data directory (issue 23, findings 1, 4 and
// 9): none of its ways to have the daemon's git run a program works, none
// of the daemon's secrets or files reaches it, and its own git commit
// works and ends in the pull request.
func TestServeSandboxedRequestReachesNothing(t *testing.T) {
	b := newBoundaryRig(t)
	b.Start(1)
	b.request()
}

// The same on the Temporal backend: the request's calls run on a worker,
// whose own home (prompts, logs) is hidden too, as is the daemon's.
func TestWorkerSandboxedRequestReachesNothing(t *testing.T) {
	b := newBoundaryRig(t)
	r := onTemporal(t, b.Daemon)
	wh := outsideTmp(t, "worker-home-")
	os.WriteFile(filepath.Join(wh, "worker-canary"), []byte("worker-canary\n"), 0o600)
	b.Env = append(b.Env, "WORKER_HOME="+wh)
	r.worker("a", "--home", wh)
	r.Start(1)
	if tried := b.request("worker-home-has:"); !strings.Contains(tried, "worker-home-looked") {
		t.Error("the agent did not look for the worker's home: the test proves nothing")
	}
	if wl := r.wlogs["a"].String(); !strings.Contains(wl, "[gh-acme-app-1] task") {
		t.Errorf("the request's calls did not run on the worker:\n%s", wl)
	}
}
