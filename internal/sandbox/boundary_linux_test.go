package sandbox

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/gitx"
)

// dialEnv makes the test binary a client of a unix socket (TestMain): the
// agent's side of the per-call channel, with no tool of the machine needed.
const dialEnv = "RALPH_TEST_DIAL"

func TestMain(m *testing.M) {
	if p := os.Getenv(dialEnv); p != "" {
		c, err := net.Dial("unix", p)
		if err != nil {
			os.Stdout.WriteString("dial-failed: " + err.Error() + "\n")
			os.Exit(1)
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		os.Stdout.WriteString("got: " + line)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hostGit runs git as the user would on the host, for the setup.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@x",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func newGitRepo(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hostGit(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	hostGit(t, dir, "add", "-A")
	hostGit(t, dir, "commit", "-q", "-m", "initial")
}

// escapes are what an agent tries from inside the sandbox to make ralph's
// git on the host run its program; each prints a word when it succeeds.
const escapes = `
	git config core.fsmonitor "$EVIL" 2>/dev/null && echo ESCAPE-fsmonitor
	git config core.hooksPath /tmp 2>/dev/null && echo ESCAPE-hooksPath
	git config core.sshCommand "$EVIL" 2>/dev/null && echo ESCAPE-sshCommand
	git config core.pager "$EVIL" 2>/dev/null && echo ESCAPE-pager
	git config include.path /tmp/x 2>/dev/null && echo ESCAPE-include
	echo '* filter=x' > .gitattributes; git config filter.x.clean "$EVIL" 2>/dev/null && echo ESCAPE-filter
	echo "#!/bin/sh" > "$COMMON/hooks/post-commit" 2>/dev/null && echo ESCAPE-hook
	echo "* filter=x" >> "$COMMON/info/attributes" 2>/dev/null && echo ESCAPE-info
	echo "[core]" >> "$COMMON/config" 2>/dev/null && echo ESCAPE-config-write
	mv "$COMMON/config" "$COMMON/config.old" 2>/dev/null && echo ESCAPE-config-rename
	mv .git .git.old 2>/dev/null && echo ESCAPE-gitdir-rename
	[ -f .git ] && { echo "gitdir: /tmp/mine" > .git; } 2>/dev/null && echo ESCAPE-gitfile
	echo b >> a.txt && git commit -qam "agent's own" && echo own-commit
	git log --oneline | wc -l | sed 's/^/commits=/'
	git branch agent-branch && echo own-branch
	# Last: it breaks the repository for git inside too.
	echo /tmp/mine > "$GITDIR/commondir" 2>/dev/null && echo wrote-commondir
	true
`

// The project's git inside the sandbox: the agent commits and branches,
// and cannot change what ralph's git on the host would run; what it can
// still write (a new commondir) the host-side guard refuses.
func TestBwrapGitControlFilesReadOnly(t *testing.T) {
	sb := needBwrap(t, Spec{})
	proj := t.TempDir()
	newGitRepo(t, proj)
	g, err := gitx.Protect(context.Background(), proj)
	if err != nil || g == nil {
		t.Fatal(err)
	}
	defer g.Release()
	marker := filepath.Join(t.TempDir(), "ran")
	env := []string{"PATH=" + os.Getenv("PATH"), "EVIL=touch " + marker, "GITDIR=.git", "COMMON=.git",
		"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@x"}
	out, _ := run(t, sb, proj, env, escapes)
	checkEscapes(t, out, 2)
	_, err = gitx.Snapshot(context.Background(), proj)
	var te *gitx.TamperError
	if !errors.As(err, &te) || te.File != filepath.Join(proj, ".git", "commondir") {
		t.Fatalf("host git after the agent wrote commondir: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the agent's program ran")
	}
}

func checkEscapes(t *testing.T, out string, commits int) {
	t.Helper()
	if strings.Contains(out, "ESCAPE") {
		t.Errorf("an escape worked:\n%s", out)
	}
	for _, want := range []string{"own-commit", "own-branch", "commits=" + string(rune('0'+commits))} {
		if !strings.Contains(out, want) {
			t.Errorf("the agent's own git: missing %q in\n%s", want, out)
		}
	}
}

// A request's worktree lives under ralph's home, its repository in a clone
// there too: the home is hidden, the worktree and the clone's git
// directory are bound, so the agent's git works (issue 23, finding 9)
// with the same read-only control files, and the other requests' entries
// are not writable.
func TestBwrapRequestWorktree(t *testing.T) {
	home := t.TempDir() // RALPH_HOME
	os.WriteFile(filepath.Join(home, "api-token"), []byte("TOKEN-SECRET\n"), 0o600)
	os.WriteFile(filepath.Join(home, "ralph.db"), []byte("DB-SECRET\n"), 0o600)
	// The session's task file is the agent's to tick; another's is not
	// even there.
	task := filepath.Join(home, "handoffs", "req-1-task.md")
	os.MkdirAll(filepath.Dir(task), 0o700)
	os.WriteFile(task, []byte("- [ ] step\n"), 0o644)
	os.WriteFile(filepath.Join(home, "handoffs", "req-2-task.md"), []byte("OTHER-TASK-SECRET\n"), 0o644)
	clone := filepath.Join(home, "requests", "repos", "o__r")
	newGitRepo(t, clone)
	wt := filepath.Join(home, "requests", "work", "req-1")
	other := filepath.Join(home, "requests", "work", "req-2")
	hostGit(t, clone, "worktree", "add", "-q", "-b", "req-1", wt)
	hostGit(t, clone, "worktree", "add", "-q", "-b", "req-2", other)
	keyDir := t.TempDir()
	key := filepath.Join(keyDir, "client.key")
	os.WriteFile(key, []byte("KEY-SECRET\n"), 0o600)
	sb := needBwrap(t, Spec{Hide: []string{home, key}})
	g, err := gitx.Protect(context.Background(), wt)
	if err != nil || g == nil {
		t.Fatal(err)
	}
	defer g.Release()
	common := filepath.Join(clone, ".git")
	env := []string{"PATH=" + os.Getenv("PATH"), "EVIL=true", "GITDIR=" + filepath.Join(common, "worktrees", "req-1"), "COMMON=" + common,
		"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@x"}
	out, _ := run(t, sb, wt, env, escapes+`
		cat "`+home+`/api-token" "`+home+`/ralph.db" "`+key+`" 2>/dev/null
		ls "`+home+`" | sed 's/^/home-has:/'
		echo x > "`+common+`/worktrees/req-2/HEAD" 2>/dev/null && echo ESCAPE-other-request
		ls "`+other+`" 2>/dev/null | sed 's/^/other-has:/'
		cat "`+home+`/handoffs/req-2-task.md" 2>/dev/null
		sed -i.bak 's/\[ \]/[x]/' "`+task+`" 2>/dev/null || { t=$(sed 's/\[ \]/[x]/' "`+task+`") && echo "$t" > "`+task+`"; }
	`, task)
	checkEscapes(t, out, 2)
	for _, leak := range []string{"SECRET", "home-has:api-token", "home-has:ralph.db", "other-has:"} {
		if strings.Contains(out, leak) {
			t.Errorf("visible inside the sandbox: %s\n%s", leak, out)
		}
	}
	if b, _ := os.ReadFile(task); string(b) != "- [x] step\n" {
		t.Errorf("the task file as the agent left it: %q", b)
	}
	if !strings.Contains(hostGit(t, wt, "log", "--oneline"), "agent's own") {
		t.Error("the agent's commit is not in the worktree's history on the host")
	}
}

// The per-call directory is the agent's channel to ralph: a unix socket in
// it answers with the network off, and another call's directory is not
// there.
func TestBwrapCallDirChannel(t *testing.T) {
	sb := needBwrap(t, Spec{Network: NetworkNone})
	parent, err := os.MkdirTemp(".", "calls-") // not under /tmp, which is hidden anyway
	if err != nil {
		t.Fatal(err)
	}
	parent, _ = filepath.Abs(parent)
	t.Cleanup(func() { os.RemoveAll(parent) })
	call, _ := os.MkdirTemp(parent, "ralph-agent-1-call-")
	another, _ := os.MkdirTemp(parent, "ralph-agent-1-call-")
	os.WriteFile(filepath.Join(another, "secret"), []byte("OTHER-CALL\n"), 0o600)
	// A socket path is short (108 bytes): the listener is opened from
	// inside the directory.
	wd, _ := os.Getwd()
	os.Chdir(call)
	l, err := net.Listen("unix", "s")
	os.Chdir(wd)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from ralph\n"))
			c.Close()
		}
	}()
	exe, _ := os.Executable()
	proj := t.TempDir()
	// The test binary is under the hidden /tmp: on PATH, the sandbox
	// shows its directory read-only, as it does an agent's.
	env := []string{"PATH=" + filepath.Dir(exe) + ":" + os.Getenv("PATH"), CallDirEnv + "=" + call}
	argv, err := sb.Wrap([]string{"sh", "-c", `
		cd "$` + CallDirEnv + `" && ` + dialEnv + `=s ` + filepath.Base(exe) + `
		cat "` + another + `/secret" 2>/dev/null
		ls "` + parent + `" | sed 's/^/parent-has:/'
	`}, proj, env)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = proj, env
	b, _ := cmd.CombinedOutput()
	out := string(b)
	t.Logf("%s", out)
	if !strings.Contains(out, "got: hello from ralph") {
		t.Errorf("the socket in the call directory did not answer:\n%s", out)
	}
	if strings.Contains(out, "OTHER-CALL") || strings.Contains(out, "parent-has:"+filepath.Base(another)) {
		t.Errorf("another call's directory is visible:\n%s", out)
	}
}
