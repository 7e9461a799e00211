package store

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, "x")
	tests := []struct {
		name    string
		project string
		wantErr bool
	}{
		{"existing directory", dir, false},
		{"missing", filepath.Join(dir, "nope"), true},
		{"a file", file, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.project)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && s.RalphDir() != filepath.Join(dir, ".ralph") {
				t.Errorf("RalphDir = %s", s.RalphDir())
			}
		})
	}
}

func TestPaths(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, errLog := s.IterationLogs(12, t0)
	paths := map[string]string{
		"PROMPT.md":              s.PromptFile(),
		"fix_plan.md":            s.FixPlanFile(),
		"AGENT.md":               s.AgentFile(),
		"specs":                  s.SpecsDir(),
		"logs":                   s.LogsDir(),
		"logs/ralph.log":         s.LogFile(),
		"logs/metrics.jsonl":     s.MetricsFile(),
		"status.json":            s.StatusFile(),
		".circuit_breaker_state": s.BreakerFile(),
		".claude_session_id":     s.AgentSessionFile(),
		".ralph_session":         s.RalphSessionFile(),
		".ralph_session_history": s.SessionHistoryFile(),
		".rate_limit_state":      s.RateLimitFile(),
		"clarification.md":       s.ClarificationFile(),
		"ralph.lock":             s.LockFile(),
		"logs/iteration_12_20250102T150405Z.stdout.log": out,
		"logs/iteration_12_20250102T150405Z.stderr.log": errLog,
	}
	for want, got := range paths {
		if w := filepath.Join(dir, ".ralph", filepath.FromSlash(want)); got != w {
			t.Errorf("got %s, want %s", got, w)
		}
	}
}

func TestOpenWith(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(t.TempDir(), "elsewhere")
	tests := []struct {
		name             string
		opts             Options
		wantDir, wantPro string
	}{
		{"defaults", Options{}, filepath.Join(dir, ".ralph"), filepath.Join(dir, ".ralph", "PROMPT.md")},
		{"relative dir", Options{RalphDir: "state"}, filepath.Join(dir, "state"), filepath.Join(dir, "state", "PROMPT.md")},
		{"absolute dir", Options{RalphDir: abs}, abs, filepath.Join(abs, "PROMPT.md")},
		{"own prompt", Options{PromptFile: "docs/prompt.md"}, filepath.Join(dir, ".ralph"), filepath.Join(dir, "docs", "prompt.md")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := OpenWith(dir, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if s.RalphDir() != tt.wantDir || s.PromptFile() != tt.wantPro {
				t.Errorf("got %s %s, want %s %s", s.RalphDir(), s.PromptFile(), tt.wantDir, tt.wantPro)
			}
		})
	}
}

func TestRequiredFiles(t *testing.T) {
	tests := []struct {
		name    string
		files   []string // created under .ralph
		dirs    []string
		want    []string
		options Options
	}{
		{name: "intact", files: []string{"PROMPT.md", "fix_plan.md", "AGENT.md"}},
		{name: "nothing", want: []string{".ralph/PROMPT.md", ".ralph/fix_plan.md", ".ralph/AGENT.md"}},
		{name: "plan missing", files: []string{"PROMPT.md", "AGENT.md"}, want: []string{".ralph/fix_plan.md"}},
		{name: "directory instead of file", files: []string{"PROMPT.md", "fix_plan.md"}, dirs: []string{"AGENT.md"},
			want: []string{".ralph/AGENT.md"}},
		{name: "relocated prompt", files: []string{"PROMPT.md", "fix_plan.md", "AGENT.md"},
			options: Options{PromptFile: "mine.md"}, want: []string{"mine.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				writeFile(t, filepath.Join(dir, ".ralph", f), "x")
			}
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(dir, ".ralph", d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s, err := OpenWith(dir, tt.options)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, filepath.FromSlash(w))
			}
			missing, err := s.RequiredFiles()
			if err != nil || !reflect.DeepEqual(missing, want) {
				t.Fatalf("got %q, %v; want %q", missing, err, want)
			}
			err = s.CheckRequired()
			var mf *MissingFilesError
			if errors.As(err, &mf) != (len(want) > 0) {
				t.Fatalf("CheckRequired = %v", err)
			}
		})
	}
}

func TestEnsureDirs(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if err := s.EnsureDirs(); err != nil {
			t.Fatal(err)
		}
	}
	if info, err := os.Stat(s.LogsDir()); err != nil || !info.IsDir() {
		t.Fatalf("logs dir: %v", err)
	}
}

// Temporaries of writers killed mid-write are swept when a run prepares its
// directories; a young one (a write in progress elsewhere) is kept.
func TestEnsureDirsSweepsStaleTemps(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	old := tempName(filepath.Join(s.RalphDir(), "status.json"))
	young := tempName(filepath.Join(s.LogsDir(), "x"))
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * StaleTempAge)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("stale temporary kept: %v", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("young temporary removed: %v", err)
	}
}
