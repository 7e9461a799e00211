package scaffold

import (
	"context"
	"os/exec"
	"strings"

	"ralph/internal/gitx"
)

// GitRunner runs git with args in dir and returns its standard output. Tests
// may replace it; the default runs the real git.
type GitRunner func(ctx context.Context, dir string, args ...string) ([]byte, error)

// Env holds the side-effecting pieces an operation needs, so tests can swap
// them. The zero value uses the real ones.
type Env struct {
	Git      GitRunner
	LookPath func(file string) (string, error)
}

func (e Env) git() GitRunner {
	if e.Git != nil {
		return e.Git
	}
	return runGit
}

func (e Env) lookPath() func(string) (string, error) {
	if e.LookPath != nil {
		return e.LookPath
	}
	return exec.LookPath
}

// requireGit fails with KindMissingDependency when git is not installed.
func (e Env) requireGit(why string) error {
	if _, err := e.lookPath()("git"); err != nil {
		return errorf(KindMissingDependency, err, "git is not installed (or not on PATH): %s", why)
	}
	return nil
}

// runGit is host git as the user runs it, through the one wrapper every
// host git of ralph's goes through.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gitx.AsUser(ctx, dir, args...)
}

// insideRepo reports whether dir is inside a git work tree.
func insideRepo(ctx context.Context, git GitRunner, dir string) bool {
	out, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}
