package watchdog

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The reader against a real tmux server on a private socket: sessions
// are matched exactly, a pane's text comes back, a missing session is
// told apart from a missing tmux.
func TestTmuxReader(t *testing.T) {
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed; scripts/install-test-deps.sh installs it")
		}
		t.Skip("tmux is not installed")
	}
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	t.Cleanup(func() { exec.Command(bin, "-S", sock, "kill-server").Run() })
	ctx := context.Background()
	r := Tmux{Socket: sock}
	if ok, err := r.Exists(ctx, "claude-5"); ok || err != nil {
		t.Fatalf("no server yet: %v %v", ok, err)
	}
	script := "printf 'first line\\n---RALPH_STATUS---\\nSTATUS: IN_PROGRESS\\n---END_RALPH_STATUS---\\n'; sleep 60"
	if out, err := exec.Command(bin, "-S", sock, "new-session", "-d", "-s", "claude-50", "-x", "80", "-y", "12", "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	if ok, err := r.Exists(ctx, "claude-5"); ok || err != nil {
		t.Errorf("claude-5 found in claude-50: %v %v", ok, err)
	}
	if ok, err := r.Exists(ctx, "claude-50"); !ok || err != nil {
		t.Fatalf("claude-50: %v %v", ok, err)
	}
	var text string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if text, err = r.Capture(ctx, "claude-50"); err == nil && strings.Contains(text, "END_RALPH_STATUS") {
			break
		}
	}
	if b := Parse(text).Block; b == nil || b.Fields["STATUS"] != "IN_PROGRESS" {
		t.Errorf("capture: %v\n%s", err, text)
	}
	if _, err := r.Capture(ctx, "claude-5"); err == nil || !strings.Contains(err.Error(), "capture-pane") {
		t.Errorf("capture of a missing session: %v", err)
	}
	t.Setenv("PATH", "")
	if _, err := r.Exists(ctx, "claude-50"); !errors.Is(err, ErrNoTmux) {
		t.Errorf("without tmux: %v", err)
	}
}
