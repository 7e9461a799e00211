package gitx

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// HandoverPrefix is where Publish pushes a working tree: one branch per
// session, ralph's own, force-pushed after every agent call.
const HandoverPrefix = "refs/heads/ralph/handover/"

// ErrSecretURL refuses a remote whose URL carries a password or token: it
// would be written wherever the handover is recorded.
var ErrSecretURL = errors.New("the remote's URL holds a password or token; use a credential helper or SSH instead")

// RemoteURL returns the URL of dir's remote name, refusing one with a
// password in it (ErrSecretURL). A name that is already a URL or a path is
// returned as it is.
func RemoteURL(ctx context.Context, dir, name string) (string, error) {
	u := name
	if out, err := git(ctx, dir, "remote", "get-url", name); err == nil {
		u = strings.TrimSpace(string(out))
	} else if !strings.Contains(name, "/") && !strings.Contains(name, ":") {
		return "", fmt.Errorf("remote %q: %w", name, err)
	}
	if p, err := url.Parse(u); err == nil && p.User != nil {
		if _, has := p.User.Password(); has {
			return "", ErrSecretURL
		}
	}
	return u, nil
}

// Publish pushes dir's working tree to ref on the remote at remoteURL, for
// another machine to Receive: the tree as Backup stores it (tracked files
// as they are on disk, untracked non-ignored ones, ralph's own state as
// HEAD has it) as a commit whose parent is HEAD, force-pushed. It touches
// nothing of the user's: no index, branch, stash or file. It returns the
// snapshot commit.
func Publish(ctx context.Context, dir, remoteURL, ref string) (string, error) {
	loc, err := requireRepo(ctx, dir)
	if err != nil {
		return "", err
	}
	if _, err := git(ctx, loc.root, "check-ref-format", ref); err != nil {
		return "", fmt.Errorf("handover: invalid ref %q", ref)
	}
	head, err := resolveHead(ctx, loc.root)
	if err != nil {
		return "", err
	}
	if head == "" {
		return "", errors.New("handover: the repository has no commit yet")
	}
	branch, err := CurrentBranch(ctx, loc.root)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "ralph-handover-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	tree, err := backupTree(ctx, loc, head, filepath.Join(tmp, "index"))
	if err != nil {
		return "", fmt.Errorf("handover: %w", err)
	}
	// The branch rides in the message: Receive puts the tree back on it.
	msg := fmt.Sprintf("ralph handover\n\nHEAD: %s\nBranch: %s\n", head, branch)
	out, err := gitCmd{dir: loc.root, args: []string{"commit-tree", "--no-gpg-sign", "-m", msg, "-p", head, tree}, env: backupIdent}.run(ctx)
	if err != nil {
		return "", fmt.Errorf("handover: %w", err)
	}
	commit := strings.TrimSpace(string(out))
	if _, err := git(ctx, loc.root, "push", "-q", "--no-verify", remoteURL, "+"+commit+":"+ref); err != nil {
		return "", fmt.Errorf("handover: push: %w", err)
	}
	return commit, nil
}

// Receive makes dir the working tree a Publish left: it fetches commit from
// ref at remoteURL (dir becomes a repository if it is not one, with the
// URL as its remote name, so the tree publishes where it came from), puts
// HEAD on the snapshot's parent, on the branch it was published from, and
// the files as the snapshot has them, nothing staged. dir is ralph's own
// workspace: whatever it held before is replaced.
func Receive(ctx context.Context, dir, name, remoteURL, ref, commit string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		if _, err := git(ctx, dir, "init", "-q"); err != nil {
			return fmt.Errorf("handover: %w", err)
		}
	}
	if name != "" && name != remoteURL {
		set := gitCmd{dir: dir, args: []string{"remote", "set-url", name, remoteURL}, control: true}
		if _, err := set.run(ctx); err != nil {
			add := gitCmd{dir: dir, args: []string{"remote", "add", name, remoteURL}, control: true}
			if _, err := add.run(ctx); err != nil {
				return fmt.Errorf("handover: %w", err)
			}
		}
	}
	const local = "refs/ralph/handover"
	if _, err := git(ctx, dir, "fetch", "-q", "--no-tags", remoteURL, "+"+ref+":"+local); err != nil {
		return fmt.Errorf("handover: fetch %s: %w", ref, err)
	}
	if _, err := git(ctx, dir, "cat-file", "-e", commit+"^{commit}"); err != nil {
		return fmt.Errorf("handover: %s has no commit %s (a newer handover replaced it?)", ref, commit)
	}
	out, err := git(ctx, dir, "log", "-1", "--format=%P%n%B", commit)
	if err != nil {
		return fmt.Errorf("handover: %w", err)
	}
	parent, body, _ := strings.Cut(string(out), "\n")
	branch := "ralph-handover"
	for l := range strings.SplitSeq(body, "\n") {
		if b, ok := strings.CutPrefix(l, "Branch: "); ok && strings.TrimSpace(b) != "" {
			branch = strings.TrimSpace(b)
		}
	}
	if _, err := git(ctx, dir, "check-ref-format", "--branch", branch); err != nil {
		return fmt.Errorf("handover: the snapshot names branch %q", branch)
	}
	parent = strings.TrimSpace(parent)
	steps := [][]string{
		{"checkout", "-q", "-f", "-B", branch, parent},
		{"clean", "-ffdq"},
		// The snapshot's files into the index and the tree, then the index
		// back to HEAD: the changes stand as they stood, unstaged.
		{"read-tree", "-u", "--reset", commit},
		{"reset", "-q"},
	}
	for _, s := range steps {
		if _, err := git(ctx, dir, s...); err != nil {
			return fmt.Errorf("handover: %w", err)
		}
	}
	return nil
}
