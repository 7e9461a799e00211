package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Progress is what changed in the repository between two snapshots.
type Progress struct {
	// Changed is true when anything below is non-zero.
	Changed bool
	// FilesChanged lists, sorted, the root-relative paths whose state
	// differs: newly modified, modified again with different content,
	// staged or unstaged, reverted, deleted, newly untracked, or changed by
	// a commit made in between.
	FilesChanged []string
	// HeadMoved is true when HEAD points at a different commit (a commit,
	// amend, reset, checkout or rebase); Head is that commit.
	HeadMoved bool
	Head      string
	// LinesAdded and LinesRemoved add up what the changed files differ by
	// from the earlier HEAD (0 when the later snapshot was not taken with
	// SnapshotAfter; binary files count nothing).
	LinesAdded, LinesRemoved int
}

// Compare says what changed from before to after. It is pure. A change that
// was already there before and is identical after does not count again.
func Compare(before, after Snap) Progress {
	var p Progress
	if !before.InRepo && !after.InRepo {
		return p
	}
	p.HeadMoved = before.Head != after.Head
	if p.HeadMoved {
		p.Head = after.Head
	}
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
	// The line counts are only trusted when measured from this very
	// before-snapshot's HEAD. With HEAD moved, a path that differs from
	// it changed during the call (it was committed) unless it was dirty
	// before and is dirty the same way after.
	s := after.Since
	if s != nil && s.Base == before.Head {
		for path := range s.Lines {
			fp, was := before.Paths[path]
			if p.HeadMoved && (!was || after.Paths[path] != fp) {
				files[path] = true
			}
		}
	}
	if len(files) > 0 {
		p.FilesChanged = make([]string, 0, len(files))
		for path := range files {
			p.FilesChanged = append(p.FilesChanged, path)
			if s != nil && s.Base == before.Head {
				if l, ok := s.Lines[path]; ok && l.Added >= 0 {
					p.LinesAdded += l.Added
					p.LinesRemoved += l.Removed
				}
			}
		}
		sort.Strings(p.FilesChanged)
	}
	p.Changed = p.HeadMoved || len(p.FilesChanged) > 0
	return p
}

// emptyTree is git's empty tree (SHA-1 and SHA-256 repositories): the base
// of a repository that had no commit yet.
const (
	emptyTreeSHA1   = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	emptyTreeSHA256 = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
)

// diffLines is `git diff --numstat` from base to the work tree, ralph's
// own state left out: what each path differs by, commits made since base
// included. A base of "" (no commit yet) is the empty tree.
func diffLines(ctx context.Context, loc location, base string, headMoved bool) (map[string]Lines, error) {
	if base == "" {
		base = emptyTreeSHA1
		if headMoved && len(loc.root) > 0 {
			if out, err := git(ctx, loc.root, "rev-parse", "--show-object-format"); err == nil && strings.TrimSpace(string(out)) == "sha256" {
				base = emptyTreeSHA256
			}
		}
	}
	if strings.HasPrefix(base, "-") {
		return nil, fmt.Errorf("diff: invalid base %q", base)
	}
	args := append([]string{"diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", base, "--"}, loc.excludeSpecs()...)
	out, err := git(ctx, loc.root, args...)
	if err != nil {
		return nil, err
	}
	return parseNumstat(out, loc), nil
}

// parseNumstat reads `--numstat -z` records: "ADDED\tREMOVED\tPATH\0",
// "-\t-\t" for a binary file.
func parseNumstat(out []byte, loc location) map[string]Lines {
	lines := map[string]Lines{}
	for _, rec := range splitZ(out) {
		a, rest, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		r, path, ok := strings.Cut(rest, "\t")
		if !ok || path == "" || loc.excluded(path) {
			continue
		}
		added, err1 := strconv.Atoi(a)
		removed, err2 := strconv.Atoi(r)
		if err1 != nil || err2 != nil {
			added, removed = -1, -1 // binary
		}
		lines[path] = Lines{Added: added, Removed: removed}
	}
	return lines
}

// countLines counts a new untracked file's lines as added, reading at most
// maxCounted bytes; a file with a NUL byte counts as binary.
func countLines(path string) Lines {
	f, err := os.Open(path)
	if err != nil {
		return Lines{}
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxCounted))
	if bytes.IndexByte(b, 0) >= 0 {
		return Lines{Added: -1, Removed: -1}
	}
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return Lines{Added: n}
}

// maxCounted bounds the bytes read to count a new file's lines.
const maxCounted = 4 << 20

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
