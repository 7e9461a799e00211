package demo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/config"
	"ralph/internal/plan"
	"ralph/internal/scaffold"
)

func TestNewProject(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := filepath.Join(t.TempDir(), "greet")
	if err := NewProject(dir); err != nil {
		t.Fatal(err)
	}
	if !scaffold.IsEnabled(dir) {
		t.Error("not a ralph project")
	}
	pl, err := plan.Options{}.Load(filepath.Join(dir, scaffold.PlanPath))
	if err != nil {
		t.Fatal(err)
	}
	if c := pl.Counts(); c.OpenRequired != 3 || c.Total != 3 {
		t.Errorf("plan counts %+v, want 3 open tasks", c)
	}
	for i, task := range pl.Tasks {
		if task.Text != Tasks[i] {
			t.Errorf("task %d = %q, want %q", i, task.Text, Tasks[i])
		}
	}
	// The .ralphrc ralph reads back is clean and gives the demo's tools.
	rc, warns, err := config.ReadRalphrc(filepath.Join(dir, ".ralphrc"), func(string) (string, bool) { return "", false })
	if err != nil || len(warns) > 0 {
		t.Fatalf("ralphrc: %v %v", warns, err)
	}
	cfg, _, err := config.Resolve(config.Defaults(), rc, nil, nil)
	if err != nil || strings.Join(cfg.AllowedTools, ",") != "Write,Edit,Read" || cfg.ProjectName != ProjectName {
		t.Errorf("config: tools %v, name %q, %v", cfg.AllowedTools, cfg.ProjectName, err)
	}
	// One commit holding everything, and a clean tree: the first iteration
	// measures its own changes only.
	out, err := exec.Command("git", "-C", dir, "log", "--format=%an %s").Output()
	if err != nil || strings.Count(string(out), "\n") != 1 || !strings.HasPrefix(string(out), "ralph demo ") {
		t.Errorf("git log: %q %v", out, err)
	}
	if out, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); err != nil || len(out) > 0 {
		t.Errorf("git status: %q %v", out, err)
	}
}

func TestNewProjectWithoutGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	if err := NewProject(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		t.Error("a repository without git")
	}
	if !scaffold.IsEnabled(dir) {
		t.Error("not a ralph project")
	}
}

func TestNewProjectRefusesAFullDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := NewProject(dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("wrote into a full directory: %v", entries)
	}
}

func TestScriptIsValid(t *testing.T) {
	s := Script()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	var total time.Duration
	for _, it := range s.Iterations {
		for _, turn := range it.Turns {
			total += time.Duration(turn.Delay)
		}
	}
	if total > 15*time.Second {
		t.Errorf("the script pauses %s in all; the demo must stay short", total)
	}
}
