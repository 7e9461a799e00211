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

// SANDBOX_PROVIDER=agent with the real CLIs: ralph's flags for each
// agent's own sandbox (Claude Code's --settings, Codex's --sandbox) are
// accepted, the agent's shell command writes the project, and a write
// outside it is stopped by the agent's sandbox, not by ralph.
func TestRunInAgentsOwnSandbox(t *testing.T) {
	tests := []struct {
		name   string
		binary func(testing.TB) string
		tool   string
		input  func(cmd string) map[string]string
	}{
		{"codex", agenttest.CodexBinary, "exec_command", func(cmd string) map[string]string { return map[string]string{"cmd": cmd} }},
		{"claude", agenttest.ClaudeBinary, "Bash", func(cmd string) map[string]string { return map[string]string{"command": cmd} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "claude" {
				// Claude Code's sandbox on Linux is bubblewrap with socat.
				needBwrap(t)
				needProgram(t, "socat")
			}
			bin := tt.binary(t)
			dir := newProject(t)
			// Outside the project and the temp directories, which Codex's
			// workspace-write leaves writable.
			outside := filepath.Join("/var/tmp", "ralph-escaped-"+filepath.Base(dir))
			t.Cleanup(func() { os.Remove(outside) })
			done := `sed -i 's/- \[ \]/- [x]/' .ralph/fix_plan.md`
			srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
				fakeapi.ToolTurn("Escaping.", tt.tool, tt.input("printf x > "+outside+" || echo BLOCKED")),
				fakeapi.ToolTurn("Working.", tt.tool, tt.input("printf 'hello\\n' > hello.txt && "+done)),
				fakeapi.TextTurn("All tasks are complete." + statusBlock("COMPLETE", true)),
			}}}})
			// Claude Code's sandbox makes unix sockets under TMPDIR, whose
			// paths must stay under the kernel's 108 bytes: a test's
			// TempDir is too deep for them.
			short, err := os.MkdirTemp("", "r")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(short) })
			// The CLI's own HOME: its sandbox keeps state there.
			env := append(ownHome(t, tt.name, cliEnv(t, tt.name, srv.URL)), "RALPH_SANDBOX_PROVIDER=agent", "TMPDIR="+short)
			r := runAgent(t, dir, tt.name, bin, env, "--max-loops", "1")
			for _, b := range toolResults(srv) {
				t.Logf("tool result: %s", b)
			}
			if r.exit != 0 || !strings.Contains(r.stdout, "complete") {
				logs, _ := filepath.Glob(filepath.Join(dir, ".ralph", "logs", "*"))
				for _, l := range logs {
					b, _ := os.ReadFile(l)
					t.Logf("%s:\n%.3000s", filepath.Base(l), b)
				}
				t.Fatalf("exit %d, want a completed run", r.exit)
			}
			checkFile(t, dir, "hello.txt", "hello\n")
			if _, err := os.Stat(outside); err == nil {
				t.Errorf("the agent's command wrote %s outside the project", outside)
			}
			noProblems(t, srv)
		})
	}
}

// toolResults are the texts of the tool results the agent sent the model.
func toolResults(srv *fakeapi.Server) []string {
	var out []string
	seen := map[string]bool{}
	for _, req := range srv.MessageRequests() {
		for _, m := range req.Messages.Conversation() {
			for _, b := range m.Content.ToolResults() {
				if seen[b.ToolUseID] {
					continue
				}
				seen[b.ToolUseID] = true
				var text []string
				for _, c := range b.Content {
					text = append(text, c.Text)
				}
				out = append(out, strings.Join(text, ""))
			}
		}
	}
	return out
}

func needProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed; .ci/run installs it (scripts/install-test-deps.sh)", name)
		}
		t.Skipf("%s is not installed", name)
	}
}
