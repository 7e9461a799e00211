package cli

import (
	"os/exec"
	"strings"
	"testing"
)

func TestShellJoinRoundTrips(t *testing.T) {
	argv := []string{"/opt/my ralph/ralph", "run", "--prompt", "it's $HOME `x`"}
	out, err := exec.Command("sh", "-c", "printf '%s\\n' "+shellJoin(argv[1:])).Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	if got := string(out); got != "run\n--prompt\nit's $HOME `x`\n" {
		t.Errorf("the shell saw %q", got)
	}
}

// The pane reports the loop's own exit code, not echo's.
func TestTmuxPaneReportsTheRealExitCode(t *testing.T) {
	shell := tmuxPaneShell([]string{"sh", "-c", "exit 5"})
	// The pane waits for Enter before it closes; give it one.
	cmd := exec.Command("sh", "-c", shell)
	cmd.Stdin = strings.NewReader("\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the pane's shell failed: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "ralph exited with 5;") {
		t.Errorf("pane says %q", out)
	}
}
