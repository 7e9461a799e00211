package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrDirty is returned (wrapped) by Rollback without force when the working
// tree has uncommitted changes that a rollback would overwrite.
var ErrDirty = errors.New("working tree has uncommitted changes")

// RollbackResult says what Rollback did.
type RollbackResult struct {
	// Commit is the backup commit the working tree now matches.
	Commit string
	// SafetyRef is the backup of the state before the rollback, taken when
	// force overrode uncommitted changes; "" when the tree was clean.
	SafetyRef string
	// Restored lists the files written from the backup (those that
	// differed from it); Removed lists files deleted because the backup
	// did not have them. Both root-relative and sorted.
	Restored, Removed []string
}

// Rollback makes the working tree of dir's repository match a backup. ref is
// a backup label, a full ref or any commit.
//
// Exactly what it does:
//   - Refuses (ErrDirty) when there are uncommitted changes or untracked
//     non-ignored files, unless force; with force it first backs the
//     current state up as refs/ralph/backups/pre-rollback-<time>, so a
//     rollback never loses work.
//   - Refuses, before changing anything, when a file of the backup would
//     replace a directory, or a directory would replace a file that is not
//     itself being removed: either could take ignored files with it.
//   - Deletes the files that git knows about (tracked, or untracked and not
//     ignored) that the backup does not have, one by one, then any
//     directories that this left empty. Never a recursive delete.
//   - Writes the files whose content differs from the backup with `git
//     checkout-index` from a temporary index, so filters, line endings,
//     symlinks and the executable bit come out as git would write them.
//
// It never changes HEAD, branches, the user's index or the stash, and never
// touches ignored files, submodules, .ralph/ or .ralphrc. Afterwards `git
// status` shows the backup's state as changes relative to the current HEAD.
func Rollback(ctx context.Context, dir, ref string, force bool) (RollbackResult, error) {
	var res RollbackResult
	loc, err := requireRepo(ctx, dir)
	if err != nil {
		return res, err
	}
	if res.Commit, err = resolveBackup(ctx, loc.root, ref); err != nil {
		return res, err
	}
	st, err := readStatus(ctx, loc)
	if err != nil {
		return res, err
	}
	dirty := len(st.entries) > 0
	if dirty && !force {
		return res, fmt.Errorf("rollback: %w (%s); commit or stash them, or force the rollback "+
			"(the current state is backed up first)", ErrDirty, describePaths(st.entries))
	}

	// Plan everything before changing anything, so a refusal leaves no trace.
	tmp, err := os.MkdirTemp("", "ralph-rollback-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	idx := filepath.Join(tmp, "index")
	want, err := backupFiles(ctx, loc, res.Commit)
	if err != nil {
		return res, err
	}
	have, err := knownFiles(ctx, loc)
	if err != nil {
		return res, err
	}
	for p := range have {
		if want[p] {
			continue
		}
		// Only files and symlinks on disk: a tracked path already deleted
		// needs nothing, a directory (a tracked path turned into one) is
		// never removed, and a path under a symlinked directory is skipped
		// because deleting through the link could reach outside the tree.
		fi, err := os.Lstat(filepath.Join(loc.root, filepath.FromSlash(p)))
		if err == nil && !fi.IsDir() && !underSymlink(loc.root, p) {
			res.Removed = append(res.Removed, p)
		}
	}
	sort.Strings(res.Removed)
	if res.Restored, err = differingFiles(ctx, loc, idx, res.Commit, want); err != nil {
		return res, err
	}
	if err := checkConflicts(loc.root, res.Restored, res.Removed); err != nil {
		return res, err
	}

	if dirty {
		// Backup reads the tree only, so the plan above stays valid.
		label := "pre-rollback-" + time.Now().UTC().Format("20060102T150405.000000000Z")
		if res.SafetyRef, err = Backup(ctx, dir, label); err != nil {
			return res, fmt.Errorf("rollback: back up the current state first: %w", err)
		}
	}
	if err := removeFiles(loc, res.Removed); err != nil {
		return res, err
	}
	if len(res.Restored) > 0 {
		in := strings.NewReader(strings.Join(res.Restored, "\x00") + "\x00")
		_, err := gitCmd{dir: loc.root, args: []string{"checkout-index", "-f", "-z", "--stdin"},
			env: []string{"GIT_INDEX_FILE=" + idx}, stdin: in}.run(ctx)
		if err != nil {
			return res, fmt.Errorf("rollback: write files: %w", err)
		}
	}
	return res, nil
}

// resolveBackup turns a label, ref or commit into a commit id, trying the
// backup namespace first so that a label never resolves to a branch.
func resolveBackup(ctx context.Context, root, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("rollback: invalid backup %q", ref)
	}
	for _, cand := range []string{backupRef(ref), ref} {
		out, err := git(ctx, root, "rev-parse", "--verify", "--quiet", cand+"^{commit}")
		if err == nil {
			return strings.TrimSpace(string(out)), nil
		}
	}
	return "", fmt.Errorf("rollback: no backup or commit named %q", ref)
}

// backupFiles lists the backup's files (not submodules) with their modes.
func backupFiles(ctx context.Context, loc location, commit string) (map[string]bool, error) {
	out, err := git(ctx, loc.root, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return nil, err
	}
	files := map[string]bool{}
	for _, rec := range splitZ(out) {
		meta, p, ok := strings.Cut(rec, "\t")
		if !ok || strings.HasPrefix(meta, "160000 ") || loc.excluded(p) {
			continue
		}
		files[p] = true
	}
	return files, nil
}

// knownFiles lists the files git knows in the working tree: those in the
// index plus untracked non-ignored ones. Ignored files are never listed, so
// never removed.
func knownFiles(ctx context.Context, loc location) (map[string]bool, error) {
	files := map[string]bool{}
	tracked, err := git(ctx, loc.root, "ls-files", "-z", "--stage")
	if err != nil {
		return nil, err
	}
	for _, rec := range splitZ(tracked) {
		meta, p, ok := strings.Cut(rec, "\t")
		if ok && !strings.HasPrefix(meta, "160000 ") && !loc.excluded(p) {
			files[p] = true
		}
	}
	args := append([]string{"ls-files", "-z", "--others", "--exclude-standard", "--", "."}, loc.excludeSpecs()...)
	untracked, err := git(ctx, loc.root, args...)
	if err != nil {
		return nil, err
	}
	for _, p := range splitZ(untracked) {
		// "dir/" entries are nested repositories: not ours to delete.
		if !strings.HasSuffix(p, "/") && !loc.excluded(p) {
			files[p] = true
		}
	}
	return files, nil
}

// differingFiles loads the backup into the temporary index and asks git
// which working files differ from it. Reading the tree over a copy of the
// user's index (`read-tree -m`) keeps the stat cache of unchanged entries,
// so unchanged files are neither re-read nor rewritten (no mtime churn for
// build tools).
func differingFiles(ctx context.Context, loc location, idx, commit string, want map[string]bool) ([]string, error) {
	env := []string{"GIT_INDEX_FILE=" + idx}
	run := func(args ...string) ([]byte, error) {
		return gitCmd{dir: loc.root, args: args, env: env}.run(ctx)
	}
	if copyIndex(ctx, loc.root, idx) != nil {
		_ = os.Remove(idx)
	}
	if _, err := run("read-tree", "-m", commit); err != nil {
		// An index with conflicts cannot be merged into; start fresh.
		_ = os.Remove(idx)
		if _, err := run("read-tree", commit); err != nil {
			return nil, err
		}
	}
	if _, err := run("update-index", "-q", "--refresh"); err != nil {
		return nil, err
	}
	out, err := run("diff-files", "-z", "--name-only", "--no-renames")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range splitZ(out) {
		if want[p] {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths, nil
}

// checkConflicts refuses a rollback that would need a recursive delete:
// a directory where the backup has a file, or a file or symlink that is not
// being removed where the backup needs a directory.
func checkConflicts(root string, restore, remove []string) error {
	removing := make(map[string]bool, len(remove))
	for _, p := range remove {
		removing[p] = true
	}
	var bad []string
	for _, p := range restore {
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil && fi.IsDir() {
			bad = append(bad, p+" (a directory in the working tree)")
			continue
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(d)))
			if err == nil && !fi.IsDir() && !removing[d] {
				bad = append(bad, p+" (its parent "+d+" is a file in the working tree)")
				break
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("rollback: refusing, nothing changed: %s", strings.Join(bad, "; "))
	}
	return nil
}

// removeFiles deletes files one by one and then the directories this left
// empty, deepest first, never the root or the project directory.
func removeFiles(loc location, paths []string) error {
	dirs := map[string]bool{}
	for _, p := range paths {
		err := os.Remove(filepath.Join(loc.root, filepath.FromSlash(p)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rollback: remove %s: %w", p, err)
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	// Longer paths first, so children go before their parents.
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	keep := strings.TrimSuffix(loc.prefix, "/")
	for _, d := range list {
		if d != keep {
			// Fails harmlessly on a directory that still holds anything,
			// ignored files included.
			_ = os.Remove(filepath.Join(loc.root, filepath.FromSlash(d)))
		}
	}
	return nil
}

// underSymlink reports whether a leading directory of p is not a real
// directory (a symlink, typically).
func underSymlink(root, p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(d))); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// describePaths names a few dirty paths for an error message.
func describePaths(entries []statusEntry) string {
	var names []string
	for i, e := range entries {
		if i == 3 {
			names = append(names, "...")
			break
		}
		names = append(names, strconv.Quote(e.path))
	}
	return fmt.Sprintf("%d paths: %s", len(entries), strings.Join(names, ", "))
}
