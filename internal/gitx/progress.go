package gitx

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Progress is what changed in the repository between two snapshots.
type Progress struct {
	// Changed is true when anything below is non-zero.
	Changed bool
	// Commits is the number of commits added between the snapshots (0 when
	// the later snapshot was not taken with SnapshotAfter).
	Commits int
	// FilesChanged lists, sorted, the root-relative paths whose state
	// differs: newly modified, modified again with different content,
	// staged or unstaged, reverted, deleted, newly untracked, or changed by
	// a commit made in between.
	FilesChanged []string
	// HeadMoved is true when HEAD points at a different commit (a commit,
	// amend, reset, checkout or rebase).
	HeadMoved bool
}

// Compare says what changed from before to after. It is pure. A change that
// was already there before and is identical after does not count again.
func Compare(before, after Snap) Progress {
	var p Progress
	if !before.InRepo && !after.InRepo {
		return p
	}
	p.HeadMoved = before.Head != after.Head
	files := map[string]bool{}
	for path, fp := range after.Paths {
		if before.Paths[path] != fp {
			files[path] = true
		}
	}
	for path := range before.Paths {
		if _, ok := after.Paths[path]; !ok {
			files[path] = true
		}
	}
	// The commit count is only trusted when it was measured from this
	// very before-snapshot's HEAD.
	if s := after.Since; s != nil && s.Base == before.Head {
		p.Commits = s.Commits
		for _, path := range s.Paths {
			files[path] = true
		}
	}
	if len(files) > 0 {
		p.FilesChanged = make([]string, 0, len(files))
		for path := range files {
			p.FilesChanged = append(p.FilesChanged, path)
		}
		sort.Strings(p.FilesChanged)
	}
	p.Changed = p.HeadMoved || p.Commits > 0 || len(p.FilesChanged) > 0
	return p
}

// CommitsSince counts the commits reachable from HEAD but not from base, the
// way `git rev-list --count base..HEAD` does. base "" counts all of HEAD's
// history; a repository without commits has 0. The loop uses it with the
// HEAD it saw at start for "commits since the loop started".
func CommitsSince(ctx context.Context, dir, base string) (int, error) {
	loc, err := requireRepo(ctx, dir)
	if err != nil {
		return 0, err
	}
	head, err := resolveHead(ctx, loc.root)
	if err != nil || head == "" {
		return 0, err
	}
	return countCommits(ctx, loc.root, base)
}

// countCommits assumes HEAD exists.
func countCommits(ctx context.Context, root, base string) (int, error) {
	rng := []string{"HEAD"}
	if base != "" {
		if strings.HasPrefix(base, "-") {
			return 0, fmt.Errorf("count commits: invalid base %q", base)
		}
		rng = []string{"^" + base, "HEAD"}
	}
	out, err := git(ctx, root, append([]string{"rev-list", "--count"}, rng...)...)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// committedPaths lists the paths whose committed content differs between
// base and HEAD (all of HEAD's files when base is ""). It compares trees
// only, which is cheap whatever the number of commits in between.
func committedPaths(ctx context.Context, loc location, base string) ([]string, error) {
	var out []byte
	var err error
	if base == "" {
		out, err = git(ctx, loc.root, "ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD")
	} else {
		out, err = git(ctx, loc.root, "diff-tree", "-r", "-z", "--name-only", "--no-renames", base, "HEAD")
	}
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range splitZ(out) {
		if !loc.excluded(p) {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// resolveHead returns HEAD's commit, or "" when the branch has no commits.
func resolveHead(ctx context.Context, root string) (string, error) {
	out, err := git(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
