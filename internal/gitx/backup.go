package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// BackupPrefix is the ref namespace of backups. A custom namespace, not a
// branch: backups stay out of `git branch`, are never pushed by a plain
// `git push` nor fetched by clones, yet as refs they keep their commits safe
// from `git gc`. See them with `git for-each-ref refs/ralph/backups/`.
const BackupPrefix = "refs/ralph/backups/"

// backupIdent is the author and committer of backup commits, so that backups
// work in repositories without user.name/user.email and are recognisably
// ralph's.
var backupIdent = []string{
	"GIT_AUTHOR_NAME=ralph", "GIT_AUTHOR_EMAIL=ralph@localhost",
	"GIT_COMMITTER_NAME=ralph", "GIT_COMMITTER_EMAIL=ralph@localhost",
}

// BackupInfo is one stored backup.
type BackupInfo struct {
	Ref     string    // full ref name, refs/ralph/backups/<label>
	Label   string    // the part after BackupPrefix
	Commit  string    // the backup commit
	Head    string    // HEAD when the backup was taken ("" if unborn)
	Time    time.Time // commit time
	Subject string    // first line of the commit message
}

// Backup stores the whole working tree of dir's repository — tracked files
// as they are on disk, staged or not, and untracked non-ignored files — as a
// commit whose parent is HEAD, under refs/ralph/backups/<label>. It never
// touches the user's index, working tree, HEAD, branches or stash: it builds
// the tree in a temporary index file (GIT_INDEX_FILE). ralph's state
// (.ralph/, .ralphrc) is left as HEAD/the index has it. An empty label
// becomes a UTC timestamp. An existing backup is never overwritten.
//
// Cost: a copy of the index, then `git add -A`, which thanks to the copied
// stat cache only reads files that changed; new and modified files are
// written to the object store (large untracked files included).
func Backup(ctx context.Context, dir, label string) (string, error) {
	loc, err := requireRepo(ctx, dir)
	if err != nil {
		return "", err
	}
	if label == "" {
		label = time.Now().UTC().Format("20060102T150405.000000000Z")
	}
	ref := BackupPrefix + label
	if _, err := git(ctx, loc.root, "check-ref-format", ref); err != nil {
		return "", fmt.Errorf("backup: invalid label %q", label)
	}
	head, err := resolveHead(ctx, loc.root)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "ralph-backup-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	tree, err := backupTree(ctx, loc, head, filepath.Join(tmp, "index"))
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	msg := fmt.Sprintf("ralph backup %s\n\nHEAD: %s\n", label, head)
	args := []string{"commit-tree", "--no-gpg-sign", "-m", msg}
	if head != "" {
		args = append(args, "-p", head)
	}
	out, err := gitCmd{dir: loc.root, args: append(args, tree), env: backupIdent}.run(ctx)
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	commit := strings.TrimSpace(string(out))
	// The empty old value makes update-ref fail if the ref exists, so a
	// reused label never destroys an earlier backup.
	if _, err := git(ctx, loc.root, "update-ref", "-m", "ralph backup", ref, commit, ""); err != nil {
		return "", fmt.Errorf("backup %q: %w", label, err)
	}
	return ref, nil
}

// backupTree writes the working tree as a tree object using the index file
// idx. It starts from a copy of the user's index so that `git add` can trust
// its stat cache and skip unchanged files; if that fails (a missing or
// unusual index, e.g. split-index), it starts again from HEAD's tree.
func backupTree(ctx context.Context, loc location, head, idx string) (string, error) {
	env := []string{"GIT_INDEX_FILE=" + idx}
	add := append([]string{"add", "-A", "--", "."}, loc.excludeSpecs()...)
	copied := copyIndex(ctx, loc.root, idx) == nil
	_, err := gitCmd{dir: loc.root, args: add, env: env}.run(ctx)
	if err != nil && copied {
		if rmErr := os.Remove(idx); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			return "", rmErr
		}
		if head != "" {
			if _, err := (gitCmd{dir: loc.root, args: []string{"read-tree", head}, env: env}).run(ctx); err != nil {
				return "", err
			}
		}
		_, err = gitCmd{dir: loc.root, args: add, env: env}.run(ctx)
	}
	if err != nil {
		return "", err
	}
	out, err := gitCmd{dir: loc.root, args: []string{"write-tree"}, env: env}.run(ctx)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// copyIndex copies the repository's index file (per worktree) to dst.
func copyIndex(ctx context.Context, root, dst string) error {
	out, err := git(ctx, root, "rev-parse", "--git-path", "index")
	if err != nil {
		return err
	}
	src := strings.TrimSpace(string(out))
	if !filepath.IsAbs(src) {
		src = filepath.Join(root, src)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}

// ListBackups returns the repository's backups, oldest first.
func ListBackups(ctx context.Context, dir string) ([]BackupInfo, error) {
	loc, err := requireRepo(ctx, dir)
	if err != nil {
		return nil, err
	}
	// Ref names and subjects cannot contain newlines or NULs, so one line
	// per ref with NUL-separated fields is unambiguous.
	out, err := git(ctx, loc.root, "for-each-ref", "--sort=refname", "--sort=creatordate",
		"--format=%(refname)%00%(objectname)%00%(parent)%00%(creatordate:unix)%00%(subject)",
		BackupPrefix)
	if err != nil {
		return nil, err
	}
	var list []BackupInfo
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 5 {
			continue
		}
		secs, _ := strconv.ParseInt(f[3], 10, 64)
		head, _, _ := strings.Cut(f[2], " ")
		list = append(list, BackupInfo{
			Ref: f[0], Label: strings.TrimPrefix(f[0], BackupPrefix), Commit: f[1],
			Head: head, Time: time.Unix(secs, 0).UTC(), Subject: f[4],
		})
	}
	return list, nil
}

// DeleteBackup removes one backup ref (a label or a full ref under
// BackupPrefix). Its commit becomes unreachable and git gc prunes it later.
func DeleteBackup(ctx context.Context, dir, ref string) error {
	loc, err := requireRepo(ctx, dir)
	if err != nil {
		return err
	}
	full := backupRef(ref)
	if !strings.HasPrefix(full, BackupPrefix) {
		return fmt.Errorf("delete backup: %q is not under %s", ref, BackupPrefix)
	}
	_, err = git(ctx, loc.root, "update-ref", "-d", full)
	return err
}

// backupRef turns a label into its full ref; full refs pass through.
func backupRef(ref string) string {
	if strings.HasPrefix(ref, "refs/") {
		return ref
	}
	return BackupPrefix + ref
}
