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
	"sync"

	"ralph/internal/reap"
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
	// raw skips the guards (guard.go uses it to resolve and read what
	// it guards); the environment is scrubbed all the same.
	raw bool
	// identity keeps the user's global configuration and identity
	// variables: Identity and UserIdentity ask who the user commits as.
	identity bool
	// control says the command writes a watched file (a remote added):
	// the guards take their fingerprint again after it succeeds.
	control bool
}

// baseArgs go before every subcommand. --no-optional-locks stops read-only
// commands such as status from rewriting the index's stat cache: ralph
// observes the repository and must never make a concurrent `git commit` of the
// user (or the agent) fail on index.lock. quotepath=off is belt and braces;
// every path we read comes from -z output, which is never quoted.
var baseArgs = []string{"--no-optional-locks", "-c", "core.quotepath=off"}

// run executes git and returns its stdout. Every git ralph runs on the
// host comes here: a scrubbed environment (env.go), no system or global
// configuration, repository-chosen programs switched off, and in a guarded
// work tree the pinned git directories after a check of what could name a
// program (guard.go).
func (c gitCmd) run(ctx context.Context) ([]byte, error) {
	var pinEnv []string
	var hit []*Guard
	if !c.raw {
		var pin *Dirs
		var err error
		if pin, hit, err = checkGuards(c.dir); err != nil {
			return nil, err
		}
		if pin != nil {
			pinEnv = pin.env()
		}
	}
	args := append([]string(nil), baseArgs...)
	for _, h := range hardening {
		args = append(args, "-c", h)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, gitExe(), append(args, c.args...)...)
	cmd.Args[0] = "git"
	cmd.Dir = c.dir
	cmd.Env = environ(append(pinEnv, c.env...), c.identity)
	cmd.Stdin = c.stdin
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := reap.Run(cmd); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("git %s: %w", strings.Join(c.args, " "), ctxErr)
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.Bytes(), &GitError{Args: c.args, ExitCode: ee.ExitCode(), Stderr: stderr.String()}
		}
		return nil, fmt.Errorf("git %s: %w", strings.Join(c.args, " "), err)
	}
	if c.control {
		for _, g := range hit {
			if err := g.retake(ctx); err != nil {
				return nil, err
			}
		}
	}
	return stdout.Bytes(), nil
}

// checkGuards looks up the pin and guards for a git run in dir and checks
// that the guards' control files are as they were: before every git, and
// before a snapshot that reads the repository without one.
func checkGuards(dir string) (*Dirs, []*Guard, error) {
	pin, hit := lookup(dir)
	for _, g := range hit {
		if err := g.Check(); err != nil {
			return nil, nil, err
		}
	}
	return pin, hit, nil
}

// Run runs git args in dir through the same wrapper as ralph's own calls
// (package requests' clones, worktrees, commits and pushes). env is the
// command's own (a credential header for a fetch or push, never more);
// control says it writes the repository's configuration.
func Run(ctx context.Context, dir string, env []string, control bool, args ...string) ([]byte, error) {
	return gitCmd{dir: dir, args: args, env: env, control: control}.run(ctx)
}

func asGitError(err error, ge **GitError) bool { return errors.As(err, ge) }

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

// gitExe is where git is on PATH, looked up again only when PATH changes: a
// loop starts git at every iteration, and the lookup stats a file in each
// PATH directory before it. When git is not found the name is left to
// exec, whose error says so.
func gitExe() string {
	path := os.Getenv("PATH")
	found.Lock()
	defer found.Unlock()
	if found.exe == "" || found.path != path {
		exe, err := exec.LookPath("git")
		if err != nil {
			return "git"
		}
		found.exe, found.path = exe, path
	}
	return found.exe
}

var found struct {
	sync.Mutex
	exe, path string
}
