package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// GitError is a git command that exited non-zero. Stderr is kept so callers
// (and ralph doctor) can show git's own explanation.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.ExitCode)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// notARepo reports whether err is git saying dir is not inside a repository,
// which Snapshot and IsRepo answer with InRepo=false rather than an error.
// LC_ALL=C makes the message stable.
func notARepo(err error) bool {
	var ge *GitError
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository")
}

// gitCmd is one git invocation. Fields beyond args are rarely needed, so they
// are set on the struct rather than threaded through every call.
type gitCmd struct {
	dir   string
	args  []string
	env   []string  // extra KEY=value pairs, appended last so they win
	stdin io.Reader // nil means no input
}

// baseArgs go before every subcommand. --no-optional-locks stops read-only
// commands such as status from rewriting the index's stat cache: ralph
// observes the repository and must never make a concurrent `git commit` of the
// user (or the agent) fail on index.lock. quotepath=off is belt and braces;
// every path we read comes from -z output, which is never quoted.
var baseArgs = []string{"--no-optional-locks", "-c", "core.quotepath=off"}

// run executes git and returns its stdout.
func (c gitCmd) run(ctx context.Context) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), baseArgs...), c.args...)...)
	cmd.Dir = c.dir
	// Prompts would hang a loop nobody watches; LC_ALL=C keeps messages
	// parseable. Later entries win in os/exec, so ours override the user's.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	cmd.Env = append(cmd.Env, c.env...)
	cmd.Stdin = c.stdin
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("git %s: %w", strings.Join(c.args, " "), ctxErr)
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.Bytes(), &GitError{Args: c.args, ExitCode: ee.ExitCode(), Stderr: stderr.String()}
		}
		return nil, fmt.Errorf("git %s: %w", strings.Join(c.args, " "), err)
	}
	return stdout.Bytes(), nil
}

// git runs a plain git command in dir.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gitCmd{dir: dir, args: args}.run(ctx)
}

// splitZ splits -z output into records, dropping the trailing empty one.
func splitZ(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.Split(string(b), "\x00")
	if s[len(s)-1] == "" {
		s = s[:len(s)-1]
	}
	return s
}
