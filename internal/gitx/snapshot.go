package gitx

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrNotRepo is returned by operations that need a git work tree when the
// directory is not inside one. Snapshot does not return it: outside a
// repository it reports InRepo=false instead, because running ralph on a
// plain directory is allowed.
var ErrNotRepo = errors.New("not inside a git work tree")

// Snap is the git state of a project at one moment, as far as progress is
// concerned. It holds no clean paths: those are implied by Head.
type Snap struct {
	// InRepo is false when the directory is not in a git work tree; the
	// other fields are then empty.
	InRepo bool
	// Root is the absolute path of the work tree.
	Root string
	// Head is the commit HEAD points to, "" in a repository without commits.
	Head string
	// Branch is the checked-out branch, "" when HEAD is detached.
	Branch string
	// Paths maps every root-relative path that is not clean (modified,
	// staged, deleted, untracked non-ignored, unmerged) to a fingerprint of
	// its state: index entry, modes and a content hash of the working file.
	// Equal fingerprints mean the path did not change between snapshots.
	Paths map[string]string
	// Since is set by SnapshotAfter: commits added relative to the earlier
	// snapshot's Head. Nil after a plain Snapshot.
	Since *Since

	// loc is where the snapshot's directory sits in its repository, so the
	// next snapshot of it needs no git process to find out again.
	loc location
	// quick is what the next snapshot needs to know git's answer without
	// asking (nil: it must ask).
	quick *quick
}

// Since is what happened between two snapshots, captured while taking the
// later one so that Compare can stay pure.
type Since struct {
	// Base is the earlier snapshot's Head ("" when it had none).
	Base string
	// Lines are the lines each path differs by between Base and the work
	// tree (committed or not), for the paths that differ at all; an
	// untracked file counts its lines as added. It is measured only when
	// something changed, so that an idle call costs one git process. When
	// HEAD did not move it may hold only the paths whose state changed
	// since the earlier snapshot, the only ones Compare then counts.
	Lines map[string]Lines
}

// Lines is one path's line count: -1 each for a binary file.
type Lines struct{ Added, Removed int }

// ChangedPaths returns the snapshot's non-clean paths, sorted.
func (s Snap) ChangedPaths() []string {
	out := make([]string, 0, len(s.Paths))
	for p := range s.Paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Snapshot records the git state of the repository containing dir. Outside
// a git work tree it returns Snap{InRepo: false} and no error.
//
// Cost: one `git rev-parse` and one `git status`, which uses the index's
// stat cache to find dirty files without reading clean ones, then hashing
// the dirty and untracked files only (see hash.go).
func Snapshot(ctx context.Context, dir string) (Snap, error) {
	loc, err := locate(ctx, dir)
	if err != nil || !loc.inRepo {
		return Snap{}, err
	}
	return snapshotAt(ctx, loc, nil)
}

// SnapshotAfter is Snapshot plus the commits made since before was taken,
// so that Compare(before, after) can count them. Use it for the snapshot
// taken after an agent call.
//
// The repository's place is the earlier snapshot's: a work tree's root does
// not move during an agent call, and asking git again would cost a process
// per iteration. (A tree that stopped being one fails the status instead.)
func SnapshotAfter(ctx context.Context, dir string, before Snap) (Snap, error) {
	loc := before.loc
	if !before.InRepo || loc.root == "" {
		var err error
		if loc, err = locate(ctx, dir); err != nil || !loc.inRepo {
			return Snap{}, err
		}
	}
	s, err := snapshotAt(ctx, loc, before.quick)
	if err != nil {
		return Snap{}, err
	}
	since := &Since{Base: before.Head}
	// Only when something changed: what each changed path differs by from
	// the HEAD the call began at (commits made during the call included),
	// for the progress and its receipt. With HEAD where it was, that is
	// read in-process when it can be (sincelines.go), else one more git.
	if s.Head != before.Head || !samePaths(before.Paths, s.Paths) {
		lines, ok := linesInProcess(loc, before, s)
		if !ok {
			if lines, err = diffLines(ctx, loc, before.Head, s.Head != before.Head); err != nil {
				return Snap{}, err
			}
		}
		since.Lines = lines
		for path, fp := range s.Paths {
			if strings.HasPrefix(fp, "?") && before.Paths[path] != fp {
				since.Lines[path] = countLines(filepath.Join(loc.root, filepath.FromSlash(path)))
			}
		}
	}
	s.Since = since
	return s, nil
}

func samePaths(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for p, fp := range a {
		if b[p] != fp {
			return false
		}
	}
	return true
}

// snapshotAt takes a snapshot, without a git process when the previous
// snapshot's quick state proves git would answer what it works out
// (quickstatus.go).
func snapshotAt(ctx context.Context, loc location, prev *quick) (Snap, error) {
	if prev != nil {
		// What git would check before running, the quick status checks
		// too.
		if _, _, err := checkGuards(loc.root); err != nil {
			return Snap{}, err
		}
	}
	read := map[string]dirRead{}
	st, q, ok := prev.status(loc, read)
	if !ok {
		q = prepareQuick(loc, prev)
		began := time.Now()
		var err error
		if st, err = gitStatus(ctx, loc, q != nil); err != nil {
			return Snap{}, err
		}
		q = q.complete(loc, st, began, prev, read)
	}
	s := Snap{InRepo: true, Root: loc.root, Head: st.head, Branch: st.branch, Paths: make(map[string]string, len(st.entries)), loc: loc, quick: q}
	var toHash []string
	for _, e := range st.entries {
		if e.hashWorktree {
			toHash = append(toHash, e.path)
		}
	}
	sums, err := fingerprintFiles(ctx, loc.root, toHash)
	if err != nil {
		return Snap{}, err
	}
	for _, e := range st.entries {
		fp := e.meta
		if e.hashWorktree {
			fp += " w:" + sums[e.path]
		}
		s.Paths[e.path] = fp
	}
	return s, nil
}

// statusEntry is one non-clean path from `git status --porcelain=v2`.
type statusEntry struct {
	path string
	// meta is the status record without its path: XY, submodule state,
	// modes and the HEAD and index object names, which already identify
	// the staged content exactly.
	meta string
	// hashWorktree is set when the working file differs from the index (or
	// is untracked), so its content must be hashed to tell two different
	// edits apart.
	hashWorktree bool
}

type status struct {
	head, branch string
	entries      []statusEntry
	// ignored are the ignored paths git listed when asked (a directory
	// with a trailing slash), for the quick status (quickstatus.go).
	ignored []string
}

// readStatus runs one `git status` for HEAD, branch and all dirty paths.
// --no-renames keeps one path per record: a rename is a deletion plus an
// addition, both of which are changes. --no-ahead-behind skips counting
// commits against the upstream, which can be slow and is not needed.
func readStatus(ctx context.Context, loc location) (status, error) {
	return gitStatus(ctx, loc, false)
}

// gitStatus is readStatus, listing the ignored paths too if asked: those
// that match a rule, an ignored directory as itself and not its content.
func gitStatus(ctx context.Context, loc location, ignored bool) (status, error) {
	args := []string{"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
		"--no-renames", "--no-ahead-behind"}
	if ignored {
		args = append(args, "--ignored=matching")
	}
	args = append(args, "--")
	out, err := git(ctx, loc.root, append(args, loc.excludeSpecs()...)...)
	if err != nil {
		return status{}, err
	}
	return parseStatus(out, loc)
}

func parseStatus(out []byte, loc location) (status, error) {
	var st status
	recs := splitZ(out)
	add := func(path, meta string, hash bool) {
		if !loc.excluded(path) {
			st.entries = append(st.entries, statusEntry{path: path, meta: meta, hashWorktree: hash})
		}
	}
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if rec == "" {
			continue
		}
		switch rec[0] {
		case '#':
			if v, ok := strings.CutPrefix(rec, "# branch.oid "); ok && v != "(initial)" {
				st.head = v
			}
			if v, ok := strings.CutPrefix(rec, "# branch.head "); ok && v != "(detached)" {
				st.branch = v
			}
		case '?':
			add(strings.TrimPrefix(rec, "? "), "?", true)
		case '!':
			// Ignored files are never progress; only listed with --ignored.
			if p := strings.TrimPrefix(rec, "! "); !loc.excluded(strings.TrimSuffix(p, "/")) {
				st.ignored = append(st.ignored, p)
			}
		case '1', '2', 'u':
			// Field counts before the path: 8 for ordinary entries, 9 for
			// renames (score), 10 for unmerged entries (three stages).
			n := 8
			switch rec[0] {
			case '2':
				n = 9
			case 'u':
				n = 10
			}
			f := strings.SplitN(rec, " ", n+1)
			if len(f) != n+1 || len(f[1]) != 2 || f[2] == "" {
				return status{}, fmt.Errorf("git status: unexpected record %q", rec)
			}
			y, sub := f[1][1], f[2]
			// The working file needs hashing when it differs from the index
			// and exists; submodules are summarised by their state field.
			hash := y != '.' && y != 'D' && sub[0] != 'S'
			add(f[n], strings.Join(f[:n], " "), hash)
			if rec[0] == '2' && i+1 < len(recs) {
				i++
				add(recs[i], "renamed-from", false)
			}
		default:
			return status{}, fmt.Errorf("git status: unexpected record %q", rec)
		}
	}
	return st, nil
}
