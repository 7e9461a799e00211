package requests

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"ralph/internal/gitx"
	"ralph/internal/redact"
)

// gitRepo runs git for requests: clones, worktrees, commits and pushes,
// through ralph's one host git (package gitx: a scrubbed environment,
// repository-chosen programs off, a request's worktree pinned and checked
// while its agent is sandboxed). The token reaches git only through the
// environment of each command on the remote (an http.extraHeader for the
// clone URL's host, via GIT_CONFIG_*): never in a remote URL, a config
// file or a log line.
type gitRepo struct {
	token string
}

// remoteCommands are the ones that talk to the remote: only they get the
// credential.
var remoteCommands = map[string]bool{"clone": true, "fetch": true, "push": true}

// env is the credential of one git command on remote (the clone URL).
func (g gitRepo) env(remote string, args []string) []string {
	u, err := url.Parse(remote)
	if g.token == "" || err != nil || u.Scheme != "https" || u.Host == "" || !remoteCommands[args[0]] {
		return nil
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + g.token))
	return []string{"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.https://" + u.Host + "/.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic}
}

// run runs git in dir; errors carry git's output with secrets masked.
func (g gitRepo) run(ctx context.Context, dir, remote string, args ...string) (string, error) {
	out, err := gitx.Run(ctx, dir, g.env(remote, args), false, args...)
	if err != nil {
		msg := err.Error()
		var ge *gitx.GitError
		if errors.As(err, &ge) {
			msg = fmt.Sprintf("exit status %d: %s", ge.ExitCode, strings.TrimSpace(ge.Stderr))
		}
		if g.token != "" {
			msg = strings.ReplaceAll(msg, g.token, "[redacted]")
		}
		return string(out), fmt.Errorf("git %s: %s", args[0], redact.String(msg))
	}
	return string(out), nil
}

// workspace is where a request's code lives: one clone per repository
// under root/repos, one worktree per request under root/work.
type workspace struct {
	root string
	git  gitRepo
}

func (w workspace) cloneDir(repo string) string {
	return filepath.Join(w.root, "repos", strings.ReplaceAll(repo, "/", "__"))
}

func (w workspace) workDir(session string) string { return filepath.Join(w.root, "work", session) }

// ensure makes the request's worktree on its branch (from the remote
// branch if an earlier run pushed it, else from base) and returns its
// directory. Repeated, it finds what it made.
func (w workspace) ensure(ctx context.Context, repo, cloneURL, base, branch, session string) (string, error) {
	if cloneURL == "" {
		return "", errors.New("the repository has no clone_url")
	}
	clone := w.cloneDir(repo)
	if _, err := os.Stat(filepath.Join(clone, ".git")); err != nil {
		if err := os.MkdirAll(filepath.Dir(clone), 0o700); err != nil {
			return "", err
		}
		tmp := clone + ".tmp"
		os.RemoveAll(tmp)
		if _, err := w.git.run(ctx, filepath.Dir(clone), cloneURL, "clone", "--quiet", "--no-checkout", cloneURL, tmp); err != nil {
			return "", err
		}
		// ralph's own files never go into a commit of a request.
		if err := os.WriteFile(filepath.Join(tmp, ".git", "info", "exclude"), []byte(".ralph/\n.ralphrc.local\n"), 0o644); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, clone); err != nil {
			return "", err
		}
	}
	dir := w.workDir(session)
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return dir, nil
	}
	if _, err := w.git.run(ctx, clone, cloneURL, "fetch", "--quiet", "--prune", "origin"); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", err
	}
	_, _ = w.git.run(ctx, clone, cloneURL, "worktree", "prune")
	from := "origin/" + base
	if _, err := w.git.run(ctx, clone, cloneURL, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+branch); err == nil {
		from = "origin/" + branch
	}
	if _, err := w.git.run(ctx, clone, cloneURL, "worktree", "add", "--quiet", "-B", branch, dir, from); err != nil {
		return "", err
	}
	return dir, nil
}

// publish commits what the agent left uncommitted and pushes the branch;
// ahead is how many commits the branch has over base (0: nothing to
// propose).
func (w workspace) publish(ctx context.Context, dir, cloneURL, base, branch, message string) (ahead int, err error) {
	if _, err := w.git.run(ctx, dir, cloneURL, "add", "-A"); err != nil {
		return 0, err
	}
	if out, _ := w.git.run(ctx, dir, cloneURL, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		args := append(w.identity(ctx, dir, cloneURL), "commit", "--quiet", "--no-verify", "-m", message)
		if _, err := w.git.run(ctx, dir, cloneURL, args...); err != nil {
			return 0, err
		}
	}
	out, err := w.git.run(ctx, dir, cloneURL, "rev-list", "--count", "origin/"+base+"..HEAD")
	if err != nil {
		return 0, err
	}
	fmt.Sscan(strings.TrimSpace(out), &ahead)
	if ahead == 0 {
		return 0, nil
	}
	_, err = w.git.run(ctx, dir, cloneURL, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch)
	return ahead, err
}

// mergeBase merges the base branch, fetched fresh, into the request's
// branch: clean is true when git merged it alone (committed); otherwise
// the merge is left in progress, its conflicts marked in the files, for
// the agent to resolve and publish to commit.
func (w workspace) mergeBase(ctx context.Context, dir, cloneURL, base string) (clean bool, err error) {
	if _, err := w.git.run(ctx, dir, cloneURL, "fetch", "--quiet", "origin", base); err != nil {
		return false, err
	}
	args := append(w.identity(ctx, dir, cloneURL), "merge", "--no-edit", "--no-verify", "origin/"+base)
	if _, err := w.git.run(ctx, dir, cloneURL, args...); err == nil {
		return true, nil
	}
	// A merge that stopped on conflicts leaves MERGE_HEAD; any other
	// failure is an error.
	if _, err := w.git.run(ctx, dir, cloneURL, "rev-parse", "--verify", "--quiet", "MERGE_HEAD"); err != nil {
		return false, fmt.Errorf("merge origin/%s: %w", base, err)
	}
	return false, nil
}

// identity is the -c arguments that give a commit an author where the
// repository has none: ralph's git reads no global configuration, so the
// user's identity is read from it explicitly, else ralph's own.
func (w workspace) identity(ctx context.Context, dir, cloneURL string) []string {
	if id, _ := w.git.run(ctx, dir, cloneURL, "config", "user.email"); strings.TrimSpace(id) != "" {
		return nil
	}
	name, email := gitx.UserIdentity(ctx)
	if name == "" || email == "" {
		name, email = "ralph", "ralph@localhost"
	}
	return []string{"-c", "user.name=" + name, "-c", "user.email=" + email}
}

// head is the commit the worktree is on.
func (w workspace) head(ctx context.Context, dir, cloneURL string) string {
	out, _ := w.git.run(ctx, dir, cloneURL, "rev-parse", "HEAD")
	return strings.TrimSpace(out)
}
