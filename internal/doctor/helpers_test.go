package doctor

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agents"
	"ralph/internal/config"
)

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// healthyEnv is a machine on which every check passes: claude on PATH at a
// recent version, an API key in the environment, a clean repository and
// plenty of disk. Tests change one thing at a time.
func healthyEnv() Env {
	return Env{
		OS:        "linux",
		Now:       func() time.Time { return testNow },
		LookupEnv: envOf(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-api03-verysecret"}),
		HomeDir:   func() (string, error) { return "/home/u", nil },
		LookPath: func(f string) (string, error) {
			if f == "claude" {
				return "/usr/local/bin/claude", nil
			}
			return "", &exec.Error{Name: f, Err: exec.ErrNotFound}
		},
		Run:          func(context.Context, []string) (string, error) { return "2.1.3 (Claude Code)\n", nil },
		Stat:         func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist },
		FreeBytes:    func(string) (uint64, error) { return 50 << 30, nil },
		ProcessAlive: func(int) bool { return false },
		Agents: func(context.Context) []agents.Found {
			return []agents.Found{{Name: "claude", Version: "2.1.3", Path: "/usr/local/bin/claude"},
				{Name: "codex", Command: "codex", Err: exec.ErrNotFound}}
		},
		Git: Git{
			IsRepo:        func(context.Context, string) (bool, error) { return true, nil },
			Root:          func(_ context.Context, dir string) (string, error) { return dir, nil },
			IsClean:       func(context.Context, string) (bool, error) { return true, nil },
			CurrentBranch: func(context.Context, string) (string, error) { return "main", nil },
			DirtyPaths:    func(context.Context, string) ([]string, error) { return nil, nil },
			Identity:      func(context.Context, string) (string, error) { return "T <t@example.com>", nil },
		},
	}
}

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// fileInfo is a stat result for files that exist only in a test.
type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (f fileInfo) Name() string       { return f.name }
func (f fileInfo) Size() int64        { return f.size }
func (f fileInfo) Mode() fs.FileMode  { return f.mode }
func (f fileInfo) ModTime() time.Time { return testNow }
func (f fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fileInfo) Sys() any           { return nil }

// statOnly makes Stat find exactly the given files, with the given sizes.
func statOnly(files map[string]int64) func(string) (fs.FileInfo, error) {
	return func(p string) (fs.FileInfo, error) {
		if size, ok := files[p]; ok {
			return fileInfo{name: filepath.Base(p), size: size}, nil
		}
		return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
}

// healthyPlan is a plan with work left to do.
const healthyPlan = "## High\n- [ ] Add login\n- [x] Set up\n## Optional\n- [ ] Dark mode\n"

// project writes a project directory with the required files (PROMPT.md,
// fix_plan.md from plan, AGENT.md) plus extra files (relative path →
// content; "" for a file's content deletes it instead, so a test can take a
// required file away).
func project(t *testing.T, plan string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".ralph/PROMPT.md":   "Work.\n",
		".ralph/fix_plan.md": plan,
		".ralph/AGENT.md":    "go test ./...\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	for name, content := range files {
		if content == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func defaultProject(dir string) Project {
	return Project{Dir: dir, Config: config.Defaults()}
}

// want asserts a check's status and that its detail holds every fragment.
func want(t *testing.T, c Check, name string, st Status, fragments ...string) {
	t.Helper()
	if c.Name != name || c.Status != st {
		t.Errorf("check = %s/%s (%q), want %s/%s", c.Name, c.Status, c.Detail, name, st)
	}
	for _, f := range fragments {
		if !strings.Contains(c.Detail, f) {
			t.Errorf("%s detail %q lacks %q", c.Name, c.Detail, f)
		}
	}
}

func find(r Report, name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

var errBoom = errors.New("boom")
