package scaffold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
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

func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// No prompt may hang a command nobody watches; C messages are stable.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return stdout.Bytes(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
		}
		return stdout.Bytes(), fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return stdout.Bytes(), nil
}

// insideRepo reports whether dir is inside a git work tree.
func insideRepo(ctx context.Context, git GitRunner, dir string) bool {
	out, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}
