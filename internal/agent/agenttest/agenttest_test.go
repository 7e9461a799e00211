package agenttest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// recorder stands in for the test a helper is given, so that Skip and
// Fatal can be observed instead of ending this test.
type recorder struct {
	testing.TB
	skipped, failed string
}

type stopped struct{}

func (r *recorder) Helper()                   {}
func (r *recorder) Skip(args ...any)          { r.skipped = fmt.Sprint(args...); panic(stopped{}) }
func (r *recorder) Fatal(args ...any)         { r.failed = fmt.Sprint(args...); panic(stopped{}) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...); panic(stopped{}) }

// call runs f against a recorder and reports what it did.
func call(t *testing.T, f func(testing.TB)) *recorder {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil && v != (stopped{}) {
				panic(v)
			}
		}()
		f(r)
	}()
	return r
}

func TestClaudeBinary(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name, bin, ci string
		wantPath      string
		wantSkip      bool
		wantFatal     bool
	}{
		{name: "installed", bin: exe, wantPath: exe},
		{name: "missing skips", bin: missing, wantSkip: true},
		{name: "not executable skips", bin: plain, wantSkip: true},
		{name: "missing under CI fails", bin: missing, ci: "true", wantFatal: true},
		{name: "installed under CI", bin: exe, ci: "true", wantPath: exe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("RALPH_CLAUDE_BIN", tt.bin)
			t.Setenv("CI", tt.ci)
			var got string
			r := call(t, func(tb testing.TB) { got = ClaudeBinary(tb) })
			if got != tt.wantPath || (r.skipped != "") != tt.wantSkip || (r.failed != "") != tt.wantFatal {
				t.Errorf("path %q skipped %q failed %q", got, r.skipped, r.failed)
			}
			if msg := r.skipped + r.failed; msg != "" && !strings.Contains(msg, "scripts/install-agents.sh") {
				t.Errorf("message %q does not say how to install", msg)
			}
		})
	}
}

func TestClaudeEnvIsolated(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "real-key-must-not-leak")
	t.Setenv("CLAUDE_CODE_OAUTH_TOKEN", "real-token-must-not-leak")
	env := ClaudeEnv(t, "http://127.0.0.1:1")
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	want := map[string]string{
		"ANTHROPIC_BASE_URL":                       "http://127.0.0.1:1",
		"ANTHROPIC_API_KEY":                        "dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"CLAUDE_CODE_MAX_RETRIES":                  "0",
		"PATH":                                     os.Getenv("PATH"),
	}
	for k, v := range want {
		if vars[k] != v {
			t.Errorf("%s = %q, want %q", k, vars[k], v)
		}
	}
	if _, ok := vars["CLAUDE_CODE_OAUTH_TOKEN"]; ok {
		t.Error("parent OAuth token leaked into the agent environment")
	}
	for _, k := range []string{"HOME", "CLAUDE_CONFIG_DIR", "TMPDIR"} {
		if info, err := os.Stat(vars[k]); err != nil || !info.IsDir() {
			t.Errorf("%s = %q is not a directory: %v", k, vars[k], err)
		}
	}
	if !strings.HasPrefix(vars["CLAUDE_CONFIG_DIR"], vars["HOME"]) {
		t.Errorf("config dir %s outside HOME %s", vars["CLAUDE_CONFIG_DIR"], vars["HOME"])
	}

	env = SetEnv(UnsetEnv(env, "ANTHROPIC_API_KEY"), "CLAUDE_CODE_OAUTH_TOKEN", "x")
	if slices.Contains(env, "ANTHROPIC_API_KEY=dummy") || !slices.Contains(env, "CLAUDE_CODE_OAUTH_TOKEN=x") {
		t.Errorf("SetEnv/UnsetEnv: %v", env)
	}
	if n := len(SetEnv(env, "CLAUDE_CODE_OAUTH_TOKEN", "y")); n != len(env) {
		t.Errorf("SetEnv duplicated a key: %d entries, want %d", n, len(env))
	}
}

func TestRun(t *testing.T) {
	env := []string{"PATH=" + os.Getenv("PATH"), "ONLY=this"}
	dir := t.TempDir()
	res := Run(t, dir, env, 10*time.Second, "/bin/sh", "-c",
		`pwd; echo "$ONLY $HOME"; cat; echo err >&2; exit 3`)
	wantOut := dir + "\nthis \n"
	if string(res.Stdout) != wantOut || string(res.Stderr) != "err\n" || res.ExitCode != 3 {
		t.Errorf("stdout %q stderr %q exit %d; want %q, \"err\\n\", 3", res.Stdout, res.Stderr, res.ExitCode, wantOut)
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	// The grandchild keeps stdout open; unless the whole group is killed,
	// Run would wait for it until WaitDelay.
	start := time.Now()
	r := call(t, func(tb testing.TB) {
		Run(tb, t.TempDir(), []string{"PATH=" + os.Getenv("PATH")}, 200*time.Millisecond,
			"/bin/sh", "-c", "sleep 30 & wait")
	})
	if !strings.Contains(r.failed, "timed out") {
		t.Errorf("failure = %q, want a timeout", r.failed)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Run took %v after the timeout: the process group survived", d)
	}
}
