// Package demo is what `ralph demo` runs: a throwaway project, the script
// the project's fake model server plays on it, and a small built-in agent
// that stands in for Claude Code when it is not installed. Everything here
// is real except the model: the loop, the agent process, the tool calls and
// the files they change.
package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"ralph/internal/gitx"
	"ralph/internal/scaffold"
)

// ProjectName is the demo project's name: a tiny Go program that says hello.
const ProjectName = "greet"

// The plan's tasks, in the order the script does them. The script checks
// them off by their exact text, so they are shared rather than repeated.
const (
	TaskGreetByName = "Greet by name: `greet NAME` prints \"Hello, NAME!\" (no name: \"Hello, world!\")"
	TaskTest        = "Add a table test for greet()"
	TaskReadme      = "Write README.md: what greet does and how to run it"
)

// Tasks are the plan's tasks in order.
var Tasks = []string{TaskGreetByName, TaskTest, TaskReadme}

// AllowedTools are the only tools the demo's agent gets: enough to show the
// loop working on files, and nothing that runs commands.
var AllowedTools = []string{"Write", "Edit", "Read"}

const goMod = "module greet\n\ngo 1.22\n"

// mainGo is where the project starts; the script's first Edit replaces
// exactly this text.
const mainGo = `package main

import "fmt"

func main() {
	fmt.Println("Hello, world!")
}
`

const spec = `# greet

greet prints a greeting on standard output.

- ` + "`greet`" + ` prints "Hello, world!".
- ` + "`greet NAME`" + ` prints "Hello, NAME!".
- The greeting is built by a function greet(name string) string, so that it
  can be tested without running the program.
`

// files are the project's files, relative to its directory, in the order
// they are written.
func files() []struct{ path, content string } {
	gitignore, _ := scaffold.MergeGitignore(nil, scaffold.GitignoreEntries)
	var plan []scaffold.Task
	for _, t := range Tasks {
		plan = append(plan, scaffold.Task{Text: t, Priority: scaffold.High})
	}
	stack := scaffold.Stack{ID: "go", Name: "Go", Language: "go", Dir: ".", Evidence: []string{"go.mod"},
		Commands: scaffold.Commands{Build: "go build ./...", Test: "go test ./...", Run: "go run . [NAME]"}}
	return []struct{ path, content string }{
		{"go.mod", goMod},
		{"main.go", mainGo},
		{".gitignore", string(gitignore)},
		{scaffold.PromptPath, string(scaffold.Prompt(ProjectName))},
		{scaffold.PlanPath, string(scaffold.FixPlan(ProjectName, plan))},
		{scaffold.AgentPath, string(scaffold.AgentNotes(ProjectName, []scaffold.Stack{stack}))},
		{".ralph/specs/greet.md", spec},
		{scaffold.RalphrcPath, string(scaffold.Ralphrc(ProjectName, "go", AllowedTools, ""))},
	}
}

// NewProject writes the demo project into dir, which must be missing or
// empty, and commits it when git is installed: ralph measures an
// iteration's progress with git, and without it falls back to what the
// agent reports, so the demo works either way.
func NewProject(dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("demo: %s is not empty", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("demo: %w", err)
	}
	for _, f := range files() {
		path := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		if err := os.WriteFile(path, []byte(f.content), 0o644); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	return commit(dir, "greet: a program that says hello, with a ralph plan")
}

// commit makes the project's first commit. The user's git configuration
// stays in force except for what could stop a throwaway commit: a missing
// identity, commit signing (a passphrase prompt) and hooks.
func commit(dir, message string) error {
	ctx := context.Background()
	base := []string{"-c", "user.name=ralph demo", "-c", "user.email=demo@ralph.invalid",
		"-c", "commit.gpgsign=false", "-c", "core.hooksPath=.git/no-hooks", "-c", "init.defaultBranch=main"}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"commit", "-q", "--no-verify", "-m", message},
	} {
		if _, err := gitx.AsUser(ctx, dir, append(base, args...)...); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	return nil
}
