package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
)

// needBwrap opens a real bubblewrap sandbox: missing locally it skips, under
// CI=true it fails (.ci/run installs bubblewrap).
func needBwrap(t *testing.T, spec Spec) *Sandbox {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is not installed; .ci/run installs it (scripts/install-test-deps.sh)")
		}
		t.Skip("bwrap is not installed")
	}
	spec.Provider = Bwrap
	sb, err := Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// run runs a shell script in the sandbox through the real runner, as an
// agent call would be run, and returns its output.
func run(t *testing.T, sb *Sandbox, dir string, env []string, script string, share ...string) (string, agent.ProcessResult) {
	t.Helper()
	logs := t.TempDir()
	r := &agent.Runner{Wrap: sb.Wrap, Grace: 200 * time.Millisecond}
	res, err := r.Run(context.Background(), agent.Process{
		Argv: []string{"sh", "-c", script}, Dir: dir, Env: env, Share: share, Timeout: 20 * time.Second,
		StdoutPath: filepath.Join(logs, "out"), StderrPath: filepath.Join(logs, "err"),
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(filepath.Join(logs, "out"))
	errOut, _ := os.ReadFile(filepath.Join(logs, "err"))
	t.Logf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, out, errOut)
	return string(out), res
}

func TestBwrapConfines(t *testing.T) {
	sb := needBwrap(t, Spec{Agent: "claude"})
	home := t.TempDir()
	for name, content := range map[string]string{".ssh/id_ed25519": "PRIVATE KEY", "other-project/secret.txt": "other",
		".claude/settings.json": "{}", ".gitconfig": "[user]\n\tname = Sandboxed\n", ".git-credentials": "https://u:CREDS@host\n"} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(home, "proj") // under home, as projects usually are
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	// Outside the project and outside /tmp: the read-only rest of the file
	// system (the package directory of this test).
	outside, err := os.MkdirTemp(".", "outside-")
	if err != nil {
		t.Fatal(err)
	}
	outside, _ = filepath.Abs(outside)
	t.Cleanup(func() { os.RemoveAll(outside) })
	hostTmp := t.TempDir()

	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	out, res := run(t, sb, proj, env, `
		echo made > made.txt && echo project-writable
		cat "$HOME/.ssh/id_ed25519" 2>/dev/null && echo LEAK-ssh
		cat "$HOME/other-project/secret.txt" 2>/dev/null && echo LEAK-other
		echo x > "`+outside+`/x" 2>/dev/null && echo ESCAPE-ro
		echo x > "`+hostTmp+`/x" 2>/dev/null && echo ESCAPE-tmp
		echo '{"a":1}' > "$HOME/.claude/settings.json" && echo config-writable
		echo y > /tmp/scratch && echo tmp-writable
		echo "git-user=$(git config --global user.name)"
		cat "$HOME/.git-credentials" 2>/dev/null && echo LEAK-creds
		echo x >> "$HOME/.gitconfig" 2>/dev/null && echo ESCAPE-gitconfig
		true
	`)
	for _, want := range []string{"project-writable", "config-writable", "tmp-writable", "git-user=Sandboxed"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, leak := range []string{"LEAK", "ESCAPE", "PRIVATE KEY"} {
		if strings.Contains(out, leak) {
			t.Errorf("sandbox let through %s:\n%s", leak, out)
		}
	}
	if res.ExitCode != 0 {
		t.Errorf("exit %d", res.ExitCode)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("project file: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json")); string(b) != "{\"a\":1}\n" {
		t.Errorf("agent config not written through: %q", b)
	}
	for _, p := range []string{filepath.Join(outside, "x"), filepath.Join(hostTmp, "x"), "/tmp/scratch"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written on the host", p)
		}
	}
}

// The network can be cut off; by default it is the host's.
func TestBwrapNetwork(t *testing.T) {
	devices := func(spec Spec) []string {
		out, _ := run(t, needBwrap(t, spec), t.TempDir(), []string{"PATH=" + os.Getenv("PATH")}, `cat /proc/net/dev`)
		var devs []string
		for _, l := range strings.Split(out, "\n") {
			if name, _, ok := strings.Cut(l, ":"); ok {
				devs = append(devs, strings.TrimSpace(name))
			}
		}
		return devs
	}
	if got := devices(Spec{Network: NetworkNone}); len(got) != 1 || got[0] != "lo" {
		t.Errorf("network devices with SANDBOX_NETWORK=none: %v, want only lo", got)
	}
	if got := devices(Spec{}); len(got) < 2 {
		t.Errorf("network devices by default: %v, want the host's", got)
	}
}

// Timeouts and process-group stops work through the wrapper: a grandchild
// that ignores SIGTERM is gone when the call ends.
func TestBwrapTimeoutKillsTree(t *testing.T) {
	sb := needBwrap(t, Spec{})
	dir := t.TempDir()
	logs := t.TempDir()
	r := &agent.Runner{Wrap: sb.Wrap, Grace: 200 * time.Millisecond, ReapTimeout: 2 * time.Second}
	start := time.Now()
	// A sleep no other test runs, so the check below finds only ours.
	sleep := fmt.Sprintf("sleep %d", 100000+os.Getpid())
	res, err := r.Run(context.Background(), agent.Process{
		Argv: []string{"sh", "-c", "trap '' TERM; (trap '' TERM; " + sleep + ") & echo started; " + sleep},
		Dir:  dir, Env: []string{"PATH=" + os.Getenv("PATH")}, Timeout: 500 * time.Millisecond,
		StdoutPath: filepath.Join(logs, "out"), StderrPath: filepath.Join(logs, "err"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || time.Since(start) > 10*time.Second {
		t.Fatalf("timed out %v after %v", res.TimedOut, time.Since(start))
	}
	if out, _ := os.ReadFile(filepath.Join(logs, "out")); string(out) != "started\n" {
		t.Errorf("output not captured: %q", out)
	}
	// The namespace's processes die with it, which the kernel finishes a
	// moment after the call returns on a busy machine.
	var left []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if left, _ = exec.Command("pgrep", "-f", sleep).Output(); len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("processes left: %s", left)
	}
}
