package gitx

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
)

// Names of ralph's own state, relative to the project directory. They are
// never progress and never backed up or rolled back.
const (
	stateDir  = ".ralph"
	stateFile = ".ralphrc"
)

// location is where dir sits in its repository.
type location struct {
	inRepo bool
	root   string // absolute work-tree root
	prefix string // dir relative to root, "" or ending in "/"
	// gitDir and commonDir are the repository's directories as git found
	// them, absolute ($GIT_DIR and $GIT_COMMON_DIR): where the line counts
	// read loose objects (sincelines.go). A guard's pinned ones win.
	gitDir, commonDir string
}

// locate asks git where dir is. Outside a work tree (including inside .git or
// a bare repository) it returns inRepo=false and no error; other failures,
// such as git refusing a repository with dubious ownership, are errors so the
// user hears about them.
func locate(ctx context.Context, dir string) (location, error) {
	out, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-prefix", "--git-dir", "--git-common-dir")
	if strings.HasPrefix(string(out), "false") {
		return location{}, nil
	}
	if err != nil {
		if notARepo(err) {
			return location{}, nil
		}
		return location{}, err
	}
	// Paths cannot hold newlines here: git prints --show-toplevel unquoted,
	// and a work tree whose absolute path has a newline is not supported.
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	loc := location{inRepo: true}
	if len(lines) > 1 {
		loc.root = lines[1]
	}
	if len(lines) > 2 {
		loc.prefix = lines[2]
	}
	// git prints these relative to dir unless they are elsewhere.
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if a, err := filepath.Abs(filepath.Join(dir, p)); err == nil {
			return a
		}
		return ""
	}
	if len(lines) > 4 {
		loc.gitDir, loc.commonDir = abs(lines[3]), abs(lines[4])
	}
	return loc, nil
}

// gitDirs are the repository's directories ralph reads itself: a live
// guard's pinned ones, else those git found ("" when unknown).
func (l location) gitDirs() (gitDir, commonDir string) {
	if pin, ok := Pinned(l.root); ok {
		return pin.GitDir, pin.CommonDir
	}
	return l.gitDir, l.commonDir
}

// excluded reports whether a root-relative path is ralph's own state, either
// at the repository root or at the project directory (they differ when ralph
// runs in a subdirectory of a larger repository).
func (l location) excluded(path string) bool {
	for _, p := range l.statePrefixes() {
		if path == p+stateFile || path == p+stateDir || strings.HasPrefix(path, p+stateDir+"/") {
			return true
		}
	}
	return false
}

func (l location) statePrefixes() []string {
	if l.prefix == "" {
		return []string{""}
	}
	return []string{"", l.prefix}
}

// excludeSpecs are pathspecs that keep git from even walking ralph's state
// (logs/ can hold many files). excluded() still filters the results, so the
// pathspecs are an optimisation, not the rule.
func (l location) excludeSpecs() []string {
	var specs []string
	for _, p := range l.statePrefixes() {
		specs = append(specs,
			":(top,exclude,literal)"+p+stateDir,
			":(top,exclude,literal)"+p+stateFile)
	}
	return specs
}

// IsRepo reports whether dir is inside a git work tree.
func IsRepo(ctx context.Context, dir string) (bool, error) {
	loc, err := locate(ctx, dir)
	return loc.inRepo, err
}

// Root returns the absolute path of the work tree that contains dir.
func Root(ctx context.Context, dir string) (string, error) {
	loc, err := requireRepo(ctx, dir)
	return loc.root, err
}

// CurrentBranch returns the short name of the checked-out branch, including
// an unborn one in an empty repository, or "" when HEAD is detached.
func CurrentBranch(ctx context.Context, dir string) (string, error) {
	if _, err := requireRepo(ctx, dir); err != nil {
		return "", err
	}
	out, err := git(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		// symbolic-ref exits 1 with no message for a detached HEAD.
		var ge *GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 && strings.TrimSpace(ge.Stderr) == "" {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// IsClean reports whether the work tree has no tracked changes (staged or
// not) and no untracked non-ignored files, ralph's own state aside.
func IsClean(ctx context.Context, dir string) (bool, error) {
	loc, err := requireRepo(ctx, dir)
	if err != nil {
		return false, err
	}
	// Status alone answers this; no need to hash anything.
	st, err := readStatus(ctx, loc)
	return err == nil && len(st.entries) == 0, err
}

// requireRepo is locate for operations that make no sense outside a repo.
func requireRepo(ctx context.Context, dir string) (location, error) {
	loc, err := locate(ctx, dir)
	if err == nil && !loc.inRepo {
		err = ErrNotRepo
	}
	return loc, err
}
