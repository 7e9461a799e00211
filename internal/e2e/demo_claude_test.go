package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/plan"
)

// `ralph demo --agent claude` finds the real Claude Code on PATH and runs
// the whole demo with it: three iterations against the scripted model,
// project_complete, the files written, and nothing left behind but the
// project it was asked to keep. The user's own credentials and API address
// in the environment must not change anything.
func TestDemoWithClaude(t *testing.T) {
	bin := t.TempDir()
	// A symlink named claude: $RALPH_CLAUDE_BIN may name the binary otherwise.
	if err := os.Symlink(agenttest.ClaudeBinary(t), filepath.Join(bin, "claude")); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + tmp,
		"ANTHROPIC_API_KEY=sk-ant-not-for-the-demo", "ANTHROPIC_BASE_URL=http://192.0.2.1:9", "RALPH_MAX_LOOPS=1"}
	r := execRalph(t, "", env, "demo", "--agent", "claude", "--keep")
	if r.exit != 0 {
		t.Fatalf("exit %d, want 0", r.exit)
	}
	for _, want := range []string{"agent:   Claude Code", "⚡ Edit main.go", "loop 1: in_progress", "loop 2: in_progress",
		"stopped after loop 3: project_complete (exit 0)", "iterations:     3",
		"files written:  .ralph/fix_plan.md, README.md, main.go, main_test.go"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if r.took > 45*time.Second {
		t.Errorf("the demo took %s; it must stay short", r.took)
	}
	m := regexp.MustCompile(`project: +(\S+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatal("no project directory in the summary")
	}
	dir := m[1]
	pl, err := plan.Options{}.Load(filepath.Join(dir, ".ralph", "fix_plan.md"))
	if err != nil || !pl.Complete() {
		t.Errorf("plan %+v %v", pl.Counts(), err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "main.go")); err != nil || !strings.Contains(string(b), "func greet(name string) string") {
		t.Errorf("main.go: %s %v", b, err)
	}
	// Kept: the project, in the temporary directory; gone: the agent's home.
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 || !strings.HasPrefix(dir, filepath.Join(tmp, entries[0].Name())) {
		t.Errorf("left in TMPDIR: %v", entries)
	}
}
