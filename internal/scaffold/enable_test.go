package scaffold

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEnableFreshThenIdempotent(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	gitOut(t, dir, "init", "-q")
	writeFiles(t, dir, map[string]string{
		"go.mod":      "module demo\n\ngo 1.22\n",
		".gitignore":  "bin/\n/.ralph/logs\n",
		"docs/prd.md": "# Demo\n\n## Must have\n- Parse flags\n- Print help\n\n## Future\n- Plugins\n",
	})
	ctx := context.Background()
	res, err := Enable(ctx, EnableOptions{Dir: dir, Sources: []TaskSource{FileSource{Path: filepath.Join(dir, "docs/prd.md")}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Enabled || res.AlreadyEnabled || res.TasksImported != 3 || res.ProjectName != filepath.Base(dir) {
		t.Fatalf("result %+v", res)
	}
	for _, f := range []string{PromptPath, PlanPath, AgentPath, RalphrcPath, ".ralph/specs/prd.md"} {
		if !slices.Contains(res.FilesCreated, f) {
			t.Errorf("%s not created: %v", f, res.FilesCreated)
		}
	}
	if !slices.Equal(res.FilesUpdated, []string{".gitignore"}) || len(res.Warnings) != 0 {
		t.Errorf("updated %v, warnings %v", res.FilesUpdated, res.Warnings)
	}
	if len(res.Stack) != 1 || res.Stack[0].ID != "go" {
		t.Errorf("stack %+v", res.Stack)
	}
	if agent := readFile(t, filepath.Join(dir, AgentPath)); !strings.Contains(agent, "`go test ./...`") {
		t.Errorf("AGENT.md:\n%s", agent)
	}
	planText := readFile(t, filepath.Join(dir, PlanPath))
	if !strings.Contains(planText, "- [ ] Parse flags") || strings.Contains(planText, PlaceholderTask) {
		t.Errorf("fix_plan.md:\n%s", planText)
	}
	gi := readFile(t, filepath.Join(dir, ".gitignore"))
	if !strings.HasPrefix(gi, "bin/\n/.ralph/logs\n") || strings.Count(gi, ".ralph/logs") != 1 {
		t.Errorf(".gitignore:\n%s", gi)
	}
	if rc := readFile(t, filepath.Join(dir, RalphrcPath)); !strings.Contains(rc, "\n# PROJECT_TYPE=go\n") {
		t.Error(".ralphrc lacks the project type")
	}

	// A second run, even with a task source, changes nothing.
	before := snapshot(t, dir)
	again, err := Enable(ctx, EnableOptions{Dir: dir, Sources: []TaskSource{FileSource{Path: filepath.Join(dir, "docs/prd.md")}}})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, snapshot(t, dir))
	if again.Enabled || !again.AlreadyEnabled || len(again.FilesCreated)+len(again.FilesUpdated) != 0 || again.TasksImported != 0 {
		t.Fatalf("second run %+v", again)
	}
	if len(again.Warnings) != 1 || !strings.Contains(again.Warnings[0], "not imported") {
		t.Errorf("warnings %v", again.Warnings)
	}

	// --force rewrites ralph's files, and only those.
	writeFiles(t, dir, map[string]string{PlanPath: "mine\n", "main.go": "package main\n"})
	forced, err := Enable(ctx, EnableOptions{Dir: dir, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !forced.Enabled || !forced.AlreadyEnabled || !slices.Contains(forced.FilesUpdated, PlanPath) {
		t.Fatalf("forced %+v", forced)
	}
	if readFile(t, filepath.Join(dir, "main.go")) != "package main\n" || readFile(t, filepath.Join(dir, ".ralph/specs/prd.md")) == "" {
		t.Error("--force touched files that are not ralph's")
	}
}

func TestEnableCompletesAMigratedProject(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{PromptPath: "p\n", PlanPath: "- [ ] x\n", AgentPath: "a\n"})
	res, err := Enable(context.Background(), EnableOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Enabled || !res.AlreadyEnabled || !slices.Contains(res.FilesCreated, RalphrcPath) || !slices.Contains(res.FilesCreated, ".gitignore") {
		t.Fatalf("%+v", res)
	}
	if readFile(t, filepath.Join(dir, PlanPath)) != "- [ ] x\n" {
		t.Error("the existing plan was replaced")
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "not a git repository") }) {
		t.Errorf("warnings %v", res.Warnings)
	}
}

// Every refusal happens before anything is written.
func TestEnableRefusals(t *testing.T) {
	needGit(t)
	tests := []struct {
		name  string
		files map[string]string
		opts  func(dir string) EnableOptions
		kind  Kind
	}{
		{"git missing", nil, func(dir string) EnableOptions { return EnableOptions{Dir: dir, Env: noGit} }, KindMissingDependency},
		{"PRD missing", nil, func(dir string) EnableOptions {
			return EnableOptions{Dir: dir, Sources: []TaskSource{FileSource{Path: filepath.Join(dir, "nope.md")}}}
		}, KindNotFound},
		{"directory missing", nil, func(dir string) EnableOptions { return EnableOptions{Dir: filepath.Join(dir, "nope")} }, KindNotFound},
		{"old flat layout", map[string]string{"PROMPT.md": "x", "@fix_plan.md": "- [ ] y"},
			func(dir string) EnableOptions { return EnableOptions{Dir: dir} }, KindRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			before := snapshot(t, dir)
			_, err := Enable(context.Background(), tt.opts(dir))
			if KindOf(err) != tt.kind {
				t.Fatalf("err %v (kind %d), want kind %d", err, KindOf(err), tt.kind)
			}
			sameTree(t, before, snapshot(t, dir))
		})
	}
}

func TestEnableNoStackAndChecklist(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"Cargo.toml": "[package]\n", "TODO.md": "- [ ] a\n- [x] b\n- c\n"})
	res, err := Enable(context.Background(), EnableOptions{Dir: dir, NoStack: true, ProjectName: "Demo",
		Sources: []TaskSource{FileSource{Path: filepath.Join(dir, "TODO.md"), Format: FormatChecklist}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stack) != 0 || res.TasksImported != 2 || slices.Contains(res.FilesCreated, ".ralph/specs/TODO.md") {
		t.Fatalf("%+v", res)
	}
	agent := readFile(t, filepath.Join(dir, AgentPath))
	if !strings.HasPrefix(agent, "# Demo:") || !strings.Contains(agent, "Test: TODO") {
		t.Errorf("AGENT.md:\n%s", agent)
	}
}
