package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/config"
	"ralph/internal/sandbox"
)

// The verify command runs what the agent wrote (its tests): where the agent
// is confined, so is the check — it writes the project only and sees none
// of ralph's home.
func TestVerifyRunsInTheSandbox(t *testing.T) {
	needBwrap(t)
	root := t.TempDir()
	proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	for _, d := range []string{proj, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "api-token"), []byte("s3cret-daemon-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RALPH_HOME", home)
	cfg := config.Config{VerifyCmd: `echo inside > in.txt; touch ../outside.txt; cat "$RALPH_HOME/api-token"; exit 0`, VerifyTimeout: time.Minute}
	cfg.Sandbox.Provider = sandbox.Bwrap
	run := verifier(cfg, proj, nil)(context.Background())
	if run.StartErr != "" || run.TimedOut {
		t.Fatalf("run %+v", run)
	}
	if _, err := os.Stat(filepath.Join(proj, "in.txt")); err != nil {
		t.Errorf("the check could not write the project: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "outside.txt")); err == nil {
		t.Error("the check wrote outside the project")
	}
	if strings.Contains(run.Tail, "s3cret-daemon-token") {
		t.Errorf("the check read ralph's home: %q", run.Tail)
	}

	// Unconfined, the same command reaches both: the test above can fail.
	cfg.Sandbox.Provider = ""
	run = verifier(cfg, proj, nil)(context.Background())
	if _, err := os.Stat(filepath.Join(root, "outside.txt")); err != nil || !strings.Contains(run.Tail, "s3cret-daemon-token") {
		t.Fatalf("unconfined run %+v, outside: %v", run, err)
	}
}

func TestVerifyTimesOut(t *testing.T) {
	cfg := config.Config{VerifyCmd: "echo started; sleep 30", VerifyTimeout: 300 * time.Millisecond}
	start := time.Now()
	run := verifier(cfg, t.TempDir(), nil)(context.Background())
	if !run.TimedOut || run.Passed() || time.Since(start) > 20*time.Second || !strings.Contains(run.Tail, "started") {
		t.Fatalf("run %+v after %s", run, time.Since(start))
	}
}
