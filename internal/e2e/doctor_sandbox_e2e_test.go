package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `ralph doctor` with SANDBOX_PROVIDER=bwrap runs the agent's --version and
// `auth status` inside bubblewrap, as the loop runs the agent: an agent
// program that tries to write outside the project and read a key under
// HOME from those calls gets neither, and the sandbox line names bwrap.
func TestDoctorRunsAgentInSandbox(t *testing.T) {
	needBwrap(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("PLANTED KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Where the probe reports to: outside the project, and not under /tmp
	// (the sandbox's /tmp is its own, so a write there would vanish either
	// way).
	evidence, err := os.MkdirTemp("/var/tmp", "ralph-doctor-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(evidence) })
	agent := filepath.Join(t.TempDir(), "claude")
	probe := "#!/bin/sh\n" +
		"{ cat \"$HOME/.ssh/id_ed25519\" > " + evidence + "/\"$1\" || echo ran > " + evidence + "/\"$1\"; } 2>/dev/null\n" +
		"case \"$1\" in\n" +
		"--version) echo '2.1.3 (Claude Code)';;\n" +
		"auth) echo '{\"loggedIn\":true,\"authMethod\":\"probe\"}';;\n" +
		"esac\n"
	if err := os.WriteFile(agent, []byte(probe), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := newProject(t)
	env := append(gitEnv(home), "RALPH_SANDBOX_PROVIDER=bwrap", "CLAUDE_CODE_CMD="+agent)
	r := execRalph(t, "", env, "doctor", "-C", dir)
	for _, want := range []string{"agent_version", "2.1.3", "logged in (`claude auth status`: probe)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor did not report %q (the probe did not run or answer)", want)
		}
	}
	line := ""
	for l := range strings.SplitSeq(r.stdout, "\n") {
		if strings.Contains(l, " sandbox ") {
			line = l
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(line), "ok") || !strings.Contains(line, "bwrap (") {
		t.Errorf("sandbox line %q: want ok, naming bwrap", line)
	}
	left, _ := os.ReadDir(evidence)
	for _, e := range left {
		b, _ := os.ReadFile(filepath.Join(evidence, e.Name()))
		t.Errorf("the agent's %s ran outside the sandbox: it wrote %s (%q)", e.Name(), filepath.Join(evidence, e.Name()), b)
	}
}
