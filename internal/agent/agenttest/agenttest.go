// Package agenttest runs real agent CLIs in tests, offline, against the fake
// model API of package fakeapi. It is imported only by tests.
package agenttest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The releases scripts/install-agents.sh pins.
const (
	ClaudeVersion   = "2.1.329"
	CodexVersion    = "0.169.0"
	GeminiVersion   = "0.61.0"
	OpencodeVersion = "1.18.33"
)

// RepoRoot returns the directory holding go.mod, found by walking up from
// the working directory (a package directory under go test).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("agenttest: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("agenttest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// ClaudeBinary returns the real Claude Code CLI: $RALPH_CLAUDE_BIN, or the
// copy scripts/install-agents.sh puts under .cache/agents. When it is
// missing the test is skipped, except under CI=true, where a skipped
// end-to-end test would hide that it never ran.
func ClaudeBinary(t testing.TB) string {
	t.Helper()
	return installedBinary(t, "Claude Code", "claude", "RALPH_CLAUDE_BIN")
}

// CodexBinary is ClaudeBinary for Codex ($RALPH_CODEX_BIN).
func CodexBinary(t testing.TB) string {
	t.Helper()
	return installedBinary(t, "Codex", "codex", "RALPH_CODEX_BIN")
}

// GeminiBinary is ClaudeBinary for Gemini CLI ($RALPH_GEMINI_BIN).
func GeminiBinary(t testing.TB) string {
	t.Helper()
	return installedBinary(t, "Gemini", "gemini", "RALPH_GEMINI_BIN")
}

// OpencodeBinary is ClaudeBinary for OpenCode ($RALPH_OPENCODE_BIN).
func OpencodeBinary(t testing.TB) string {
	t.Helper()
	return installedBinary(t, "OpenCode", "opencode", "RALPH_OPENCODE_BIN")
}

func installedBinary(t testing.TB, label, name, envVar string) string {
	t.Helper()
	path := os.Getenv(envVar)
	if path == "" {
		path = filepath.Join(RepoRoot(t), ".cache", "agents", "node_modules", ".bin", name)
	}
	if info, err := os.Stat(path); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		msg := "agenttest: " + label + " CLI not found at " + path +
			"; run scripts/install-agents.sh (or set " + envVar + ")"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// ClaudeEnv returns the whole environment for a claude process talking to
// the fake at baseURL, with a fresh HOME, config and temp directory. Nothing
// else is inherited but PATH, so a developer's real credentials or settings
// can never reach the CLI.
func ClaudeEnv(t testing.TB, baseURL string) []string {
	t.Helper()
	home := t.TempDir()
	cfg := filepath.Join(home, "cfg")
	tmp := filepath.Join(home, "tmp")
	for _, d := range []string{cfg, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("agenttest: %v", err)
		}
	}
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + cfg,
		"TMPDIR=" + tmp,
		// Reset times are printed in local time; UTC keeps outputs stable.
		"TZ=UTC",
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=dummy",
		// Otherwise it contacts outside hosts (fails fast offline, but
		// noisily and slowly).
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// Otherwise a 429 or 529 is retried for minutes.
		"CLAUDE_CODE_MAX_RETRIES=0",
	}
}

// SetEnv returns env with key set to value, replacing any earlier value.
func SetEnv(env []string, key, value string) []string {
	return append(UnsetEnv(env, key), key+"="+value)
}

// UnsetEnv returns env without key.
func UnsetEnv(env []string, key string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// Result is what a finished process left behind.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
}

// Run runs bin with args in dir with exactly env, stdin from /dev/null
// (agent CLIs wait for stdin when it is not a terminal), in its own process
// group so that a timeout also kills the tools it started. A timeout or a
// failure to start fails the test; a non-zero exit is returned.
func Run(t testing.TB, dir string, env []string, timeout time.Duration, bin string, args ...string) Result {
	t.Helper()
	res, timedOut := RunWithin(t, dir, env, timeout, bin, args...)
	if timedOut {
		t.Fatalf("agenttest: %s timed out after %v\nstdout:\n%s\nstderr:\n%s", bin, timeout, res.Stdout, res.Stderr)
	}
	return res
}

// RunWithin is Run reporting a timeout (the process killed) instead of
// failing the test on it.
func RunWithin(t testing.TB, dir string, env []string, timeout time.Duration, bin string, args ...string) (res Result, timedOut bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("agenttest: start %s: %v", bin, err)
	}
	res = Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		return res, true
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("agenttest: run %s: %v", bin, err)
	}
	return res, false
}

// ReadFile returns the file at path, failing the test when it cannot be
// read.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Sample returns a verbatim output of a CLI kept in the test's testdata
// directory.
func Sample(t testing.TB, name string) []byte {
	t.Helper()
	return ReadFile(t, filepath.Join("testdata", name))
}
