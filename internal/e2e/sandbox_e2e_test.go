package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
)

func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is not installed; .ci/run installs it (scripts/install-test-deps.sh)")
		}
		t.Skip("bwrap is not installed")
	}
}

// `ralph run` with SANDBOX_PROVIDER=bwrap and an agent that tries what a
// hostile one would: it writes the project, but cannot read a planted key
// under HOME or write outside the project.
func TestRunSandboxedAgentIsConfined(t *testing.T) {
	needBwrap(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("PLANTED KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	dir := newProject(t)
	script := `cat "$HOME/.ssh/id_ed25519" > leaked.txt 2>&1; echo written > made.txt; ` +
		`echo x > "` + outside + `/escaped.txt"; echo x > /var/tmp/ralph-escaped.txt; ` +
		`echo "Tried. STATUS: IN_PROGRESS"`
	env := append(gitEnv(home), "RALPH_SANDBOX_PROVIDER=bwrap", "RALPH_DELAY=0", "RALPH_FAILURE_BACKOFF=0")
	r := execRalph(t, "", env, "run", "-C", dir, "--agent", "command", "--agent-cmd", "sh -c '"+script+"'", "--max-loops", "1")
	if r.exit != 5 {
		t.Fatalf("exit %d, want 5 (max_loops)", r.exit)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(b) != "written\n" {
		t.Errorf("the project was not writable: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "leaked.txt")); strings.Contains(string(b), "PLANTED") {
		t.Errorf("the agent read a file under HOME: %q", b)
	}
	for _, p := range []string{filepath.Join(outside, "escaped.txt"), "/var/tmp/ralph-escaped.txt"} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("the agent wrote %s outside the project", p)
		}
	}
}

// The real Claude Code CLI completes a loop inside the sandbox against the
// fake model API: its config dir is writable, the project too, the
// network reaches 127.0.0.1.
func TestRunSandboxedWithClaude(t *testing.T) {
	needBwrap(t)
	dir := newProject(t)
	// A file of the host's /tmp, which the sandbox replaces with its own.
	planted := filepath.Join(t.TempDir(), "planted.txt")
	if err := os.WriteFile(planted, []byte("HOSTSECRET42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{
			// Claude Code's own checks refuse a cat outside the project, so
			// the probe is a script inside it: only the sandbox stops it.
			fakeapi.ToolTurn("Writing a probe.", "Write", map[string]string{"file_path": filepath.Join(dir, "probe.sh"),
				"content": "cat " + planted + " || echo PROBE-BLOCKED\n"}),
			fakeapi.ToolTurn("Running it.", "Bash", map[string]string{"command": "sh probe.sh"}),
			fakeapi.ToolTurn("Creating hello.txt.", "Write", map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
			fakeapi.ToolTurn("", "Write", map[string]string{"file_path": filepath.Join(dir, ".ralph", "fix_plan.md"), "content": donePlanMD}),
			fakeapi.TextTurn("All tasks are complete." + statusBlock("COMPLETE", true)),
		}},
	}})
	env := append(agenttest.ClaudeEnv(t, srv.URL), "RALPH_SANDBOX_PROVIDER=bwrap")
	r := runRalph(t, dir, env, "--allowed-tools", "Write,Read,Bash(sh probe.sh)", "--output-format", "stream-json")
	if r.exit != 0 || !strings.Contains(r.stdout, "project_complete") {
		t.Fatalf("exit %d, want 0 with project_complete", r.exit)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("hello.txt: %q %v", b, err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, ".ralph", "logs", "iteration_1_*.stdout.log"))
	if len(logs) != 1 {
		t.Fatalf("iteration logs %v", logs)
	}
	out, _ := os.ReadFile(logs[0])
	if strings.Contains(string(out), "HOSTSECRET42") {
		t.Error("the agent read a file of the host's /tmp from inside the sandbox")
	}
	if !strings.Contains(string(out), "PROBE-BLOCKED") {
		t.Error("the agent's cat did not run (or failed for another reason)")
	}
}
