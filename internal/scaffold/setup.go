package scaffold

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SetupOptions describe one `ralph setup NAME`.
type SetupOptions struct {
	Dir         string // the new project's directory
	ProjectName string // "" means the directory's name
	Force       bool   // write into a directory that is not empty
	Env         Env
}

// SetupResult is the report, also printed by `ralph setup --json`.
type SetupResult struct {
	Created        bool     `json:"created"`
	ProjectDir     string   `json:"project_dir"`
	ProjectName    string   `json:"project_name"`
	Stack          []Stack  `json:"stack"`
	FilesCreated   []string `json:"files_created"`
	FilesUpdated   []string `json:"files_updated"`
	FilesSkipped   []string `json:"files_skipped"`
	GitInitialized bool     `json:"git_initialized"`
	Committed      bool     `json:"committed"`
	Commit         string   `json:"commit,omitempty"`
	Warnings       []string `json:"warnings"`
	Error          string   `json:"error,omitempty"`
}

// NewSetupResult is the empty report, with lists that print as [] in JSON.
func NewSetupResult(dir string) *SetupResult {
	return &SetupResult{ProjectDir: dir, Stack: []Stack{}, FilesCreated: []string{}, FilesUpdated: []string{},
		FilesSkipped: []string{}, Warnings: []string{}}
}

// Setup creates a new project directory with ralph's files and a README,
// runs `git init` and commits exactly the files it created. An existing
// directory that is not empty is refused unless Force; then ralph's files
// are written into it, a README is still never replaced, and when the
// directory already is a git repository nothing is committed.
func Setup(ctx context.Context, o SetupOptions) (*SetupResult, error) {
	if strings.TrimSpace(o.Dir) == "" {
		return NewSetupResult(""), errorf(KindBadInput, nil, "the project needs a name")
	}
	dir, err := projectDir(o.Dir, false)
	res := NewSetupResult(dir)
	if err != nil {
		return res, err
	}
	res.ProjectName = o.ProjectName
	if res.ProjectName == "" {
		res.ProjectName = filepath.Base(dir)
	}
	if err := o.Env.requireGit("setup initialises a git repository"); err != nil {
		return res, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return res, err
	}
	if len(entries) > 0 && !o.Force {
		return res, errorf(KindRefused, nil,
			"%s exists and is not empty: use --force to add ralph's files to it (a README is never replaced), or `ralph enable` inside it", o.Dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	stacks, err := Detect(os.DirFS(dir))
	if err != nil {
		return res, fmt.Errorf("detect the stack: %w", err)
	}
	res.Stack = append(res.Stack, stacks...)

	w := &writer{root: dir, force: o.Force}
	if err := w.keep("README.md", Readme(res.ProjectName)); err != nil {
		return res, err
	}
	if err := writeProject(w, res.ProjectName, stacks, nil); err != nil {
		return res, err
	}
	res.Created = true
	res.FilesCreated = append(res.FilesCreated, w.created...)
	res.FilesUpdated = append(res.FilesUpdated, w.updated...)
	res.FilesSkipped = append(res.FilesSkipped, w.skipped...)
	res.Warnings = append(res.Warnings, w.notes...)

	// Only a repository setup made itself gets a commit: committing into a
	// repository the user already had is not what they asked for.
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		res.Warnings = append(res.Warnings, "already a git repository: nothing committed; review and commit ralph's files yourself")
		return res, nil
	}
	git := o.Env.git()
	if _, err := git(ctx, dir, "init", "-q"); err != nil {
		return res, err
	}
	res.GitInitialized = true
	if len(w.created) == 0 {
		return res, nil
	}
	if _, err := git(ctx, dir, append([]string{"add", "--"}, w.created...)...); err != nil {
		return res, err
	}
	msg := fmt.Sprintf("Set up %s as a ralph project", res.ProjectName)
	// Without an identity the commit fails, and so would every commit the
	// agent makes: that is an error to fix now, not a warning to scroll past.
	if _, err := git(ctx, dir, "var", "GIT_COMMITTER_IDENT"); err != nil {
		return res, errorf(KindGeneral, err, "created %s and staged its files, but git has no identity to commit with (the agent's commits would fail too): "+
			"set `git config --global user.name \"Your Name\"` and `git config --global user.email you@example.com`, then `git commit -m %q` in %s", res.ProjectName, msg, dir)
	}
	if _, err := git(ctx, dir, append([]string{"commit", "-q", "-m", msg, "--"}, w.created...)...); err != nil {
		// The files are there and staged; the user can commit by hand.
		return res, errorf(KindGeneral, err, "created %s and staged its files, but the initial commit failed: %v", res.ProjectName, err)
	}
	res.Committed = true
	if out, err := git(ctx, dir, "rev-parse", "HEAD"); err == nil {
		res.Commit = strings.TrimSpace(string(out))
	}
	return res, nil
}
