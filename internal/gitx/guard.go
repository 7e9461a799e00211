package gitx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// A sandboxed agent writes into the repository ralph then runs git in,
// outside the sandbox. Whatever git reads that can name a program (the
// configuration and the files it includes, hooks, info/, a worktree's .git
// file and the commondir that redirects a git directory) would let the
// agent choose what ralph runs unconfined. A list of options to switch off
// cannot be complete (filter and diff drivers take any name), so a Guard
// makes it structural:
//
//   - the git directories are resolved once, before any agent call, and
//     every host git in the work tree runs with GIT_DIR, GIT_COMMON_DIR and
//     GIT_WORK_TREE set to them: a replaced .git file or an added commondir
//     redirects nothing;
//   - the files above are fingerprinted then, and checked before every
//     host git in the work tree (or in the main work tree of the same
//     repository, a request's clone): a change refuses the call with a
//     TamperError naming the file.
//
// The sandbox (package sandbox) makes the same files read-only inside, so
// an agent's attempt fails there; the check is what holds where a bind
// cannot (a file that did not exist).

// Dirs are where a work tree's repository lives, as absolute paths.
type Dirs struct {
	WorkTree string // the work tree's root
	// GitDir is $GIT_DIR: WorkTree/.git, or <CommonDir>/worktrees/<name>
	// for a linked worktree.
	GitDir    string
	CommonDir string // $GIT_COMMON_DIR, the repository's own directory
	// GitFile is WorkTree/.git when it is a file naming GitDir ("" when
	// .git is the directory itself).
	GitFile string
}

// Linked reports whether the work tree is a linked worktree (git worktree
// add): its git directory is an entry of the common one.
func (d Dirs) Linked() bool { return d.GitDir != d.CommonDir }

// MainWorkTree is the work tree of the repository's own directory (a
// request's clone), "" for a bare one.
func (d Dirs) MainWorkTree() string {
	if filepath.Base(d.CommonDir) == ".git" {
		return filepath.Dir(d.CommonDir)
	}
	return ""
}

// env pins git to these directories.
func (d Dirs) env() []string {
	return []string{"GIT_DIR=" + d.GitDir, "GIT_COMMON_DIR=" + d.CommonDir, "GIT_WORK_TREE=" + d.WorkTree}
}

// TamperError is a file that git reads for what to run, changed since the
// guard took its fingerprint: ralph refuses to run git there.
type TamperError struct {
	WorkTree string
	File     string
}

func (e *TamperError) Error() string {
	return fmt.Sprintf("git: %s changed while a sandboxed agent could write it; ralph runs no more git in %s, "+
		"since that file can name a program for git to run outside the sandbox: look at it, restore it, and start again",
		e.File, e.WorkTree)
}

// Guard pins one work tree's git directories and watches the files that
// could make host git run a program. Make one with Protect.
type Guard struct {
	Dirs
	mu   sync.Mutex
	base fingerprint
}

// guards are the live guards of this process: every host git consults
// them, whoever calls it (the loop's snapshots, a request's push, a
// worker's handover).
var guards struct {
	sync.Mutex
	list []*Guard
}

// Protect resolves dir's repository, fingerprints what could name a
// program, and from now on pins and checks every host git in it until
// Release. It returns nil (and no error) outside a repository.
func Protect(ctx context.Context, dir string) (*Guard, error) {
	d, ok, err := Resolve(ctx, dir)
	if err != nil || !ok {
		return nil, err
	}
	g := &Guard{Dirs: d}
	if g.base, err = g.take(ctx); err != nil {
		return nil, err
	}
	guards.Lock()
	guards.list = append(guards.list, g)
	guards.Unlock()
	return g, nil
}

// Release stops pinning and checking. Safe on nil.
func (g *Guard) Release() {
	if g == nil {
		return
	}
	guards.Lock()
	defer guards.Unlock()
	for i, x := range guards.list {
		if x == g {
			guards.list = append(guards.list[:i], guards.list[i+1:]...)
			return
		}
	}
}

// Check compares the files with the fingerprint; a *TamperError names the
// first that differs. Safe on nil.
func (g *Guard) Check() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := fingerprint{}
	for p := range g.base {
		now[p] = digest(p)
	}
	g.walkDirs(now)
	if f := g.base.differs(now); f != "" {
		return &TamperError{WorkTree: g.WorkTree, File: f}
	}
	return nil
}

// retake fingerprints again after ralph's own git changed a watched file
// (a remote added): only after a Check passed before that command.
func (g *Guard) retake(ctx context.Context) error {
	fp, err := g.take(ctx)
	if err == nil {
		g.mu.Lock()
		g.base = fp
		g.mu.Unlock()
	}
	return err
}

// Resolve asks git where dir's repository is; ok is false outside one.
func Resolve(ctx context.Context, dir string) (Dirs, bool, error) {
	out, err := gitCmd{dir: dir, raw: true,
		args: []string{"rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir"}}.run(ctx)
	if err != nil {
		if notARepo(err) {
			return Dirs{}, false, nil
		}
		return Dirs{}, false, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 || lines[0] == "" {
		return Dirs{}, false, nil // inside .git, or a bare repository: no work tree
	}
	d := Dirs{WorkTree: lines[0], GitDir: filepath.Clean(lines[1]), CommonDir: filepath.Clean(lines[2])}
	if fi, err := os.Lstat(filepath.Join(d.WorkTree, ".git")); err == nil && fi.Mode().IsRegular() {
		d.GitFile = filepath.Join(d.WorkTree, ".git")
	}
	return d, true, nil
}

// Pinned returns the directories a live guard pinned for dir's work tree.
func Pinned(dir string) (Dirs, bool) {
	pin, _ := lookup(dir)
	if pin == nil {
		return Dirs{}, false
	}
	return *pin, true
}

// lookup finds the pin for a git run in dir (the guard whose work tree
// holds dir; the deepest wins) and every guard whose files that run reads.
func lookup(dir string) (*Dirs, []*Guard) {
	guards.Lock()
	defer guards.Unlock()
	if len(guards.list) == 0 || dir == "" {
		return nil, nil
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	var pin *Dirs
	var hit []*Guard
	for _, g := range guards.list {
		switch {
		case within(dir, g.WorkTree):
			if pin == nil || len(g.WorkTree) > len(pin.WorkTree) {
				d := g.Dirs
				pin = &d
			}
			hit = append(hit, g)
		case g.MainWorkTree() != "" && within(dir, g.MainWorkTree()):
			// A request's clone: its configuration and hooks are the
			// worktree's too.
			if pin == nil {
				pin = &Dirs{WorkTree: g.MainWorkTree(), GitDir: g.CommonDir, CommonDir: g.CommonDir}
			}
			hit = append(hit, g)
		}
	}
	return pin, hit
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// fingerprint is path → digest of what git could read there.
type fingerprint map[string]string

// differs names the first path (sorted) whose digest is not the same.
func (a fingerprint) differs(b fingerprint) string {
	var diff []string
	get := func(f fingerprint, p string) string {
		if d, ok := f[p]; ok {
			return d
		}
		return "missing"
	}
	for p, d := range a {
		if get(b, p) != d {
			diff = append(diff, p)
		}
	}
	for p, d := range b {
		if _, ok := a[p]; !ok && d != "missing" {
			diff = append(diff, p)
		}
	}
	if len(diff) == 0 {
		return ""
	}
	sort.Strings(diff)
	return diff[0]
}

// controlFiles are the files of a git directory that can name a program
// or more configuration, or move the directory.
var controlFiles = []string{"config", "config.worktree", "commondir", "gitdir"}

// controlDirs are the directories of the common one whose files git runs
// (any name in hooks/ can be a hook) or reads (gitReadsInfo of info/).
var controlDirs = []string{"hooks", "info"}

// gitReadsInfo are the files of info/ git reads. Others there are not
// git's: an agent's own sandbox keeps its markers there (Claude Code's
// .claude-sandbox-noreplace).
var gitReadsInfo = map[string]bool{"attributes": true, "exclude": true, "sparse-checkout": true, "grafts": true}

// take fingerprints the watched files now, following include.path and
// includeIf.*.path from every configuration file.
func (g *Guard) take(ctx context.Context) (fingerprint, error) {
	fp := fingerprint{}
	fp[filepath.Join(g.WorkTree, ".git")] = digest(filepath.Join(g.WorkTree, ".git"))
	var configs []string
	for _, d := range g.gitDirs() {
		for _, f := range controlFiles {
			p := filepath.Join(d, f)
			fp[p] = digest(p)
			if strings.HasPrefix(f, "config") {
				configs = append(configs, p)
			}
		}
	}
	seen := map[string]bool{}
	for len(configs) > 0 {
		c := configs[0]
		configs = configs[1:]
		if seen[c] || len(seen) > 64 {
			continue
		}
		seen[c] = true
		incs, err := includes(ctx, c)
		if err != nil {
			return nil, err
		}
		for _, p := range incs {
			fp[p] = digest(p)
			configs = append(configs, p)
		}
	}
	g.walkDirs(fp)
	return fp, nil
}

func (g *Guard) gitDirs() []string {
	if g.Linked() {
		return []string{g.CommonDir, g.GitDir}
	}
	return []string{g.CommonDir}
}

// walkDirs adds every entry under the watched directories: a hook added
// where there was none is a change too.
func (g *Guard) walkDirs(fp fingerprint) {
	for _, d := range controlDirs {
		root := filepath.Join(g.CommonDir, d)
		fp[root] = digest(root)
		_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err == nil && p != root && (d != "info" || gitReadsInfo[filepath.Base(p)]) {
				fp[p] = digest(p)
			}
			return nil
		})
	}
}

// digest is what a path is: missing, a directory, a link and its target,
// or a file's mode and content hash. An empty configuration file, hook or
// info file is missing: git reads nothing from it, and a sandbox that
// guards a file by mounting over it leaves one behind where the file did
// not exist (Claude Code's own sandbox does this to .git/config.worktree).
// An empty commondir or gitdir is not: git fails on it.
func digest(p string) string {
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return "missing"
	case fi.IsDir():
		return "dir " + fi.Mode().String()
	case fi.Mode()&fs.ModeSymlink != 0:
		t, _ := os.Readlink(p)
		return "link " + t
	case !fi.Mode().IsRegular():
		return "special " + fi.Mode().String()
	case fi.Size() == 0 && emptyIsNone(p):
		return "missing"
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "unreadable"
	}
	sum := sha256.Sum256(b)
	return fi.Mode().String() + " " + hex.EncodeToString(sum[:])
}

// includes lists the files a configuration file includes, whatever their
// condition, resolved as git does: relative to the including file, ~ as
// the home directory. git itself parses the file (the syntax has quoting
// and continuation lines), reading only that file.
func includes(ctx context.Context, file string) ([]string, error) {
	if _, err := os.Stat(file); err != nil {
		return nil, nil
	}
	out, err := gitCmd{dir: "/", raw: true, args: []string{"config", "--file", file, "--no-includes", "--null",
		"--get-regexp", `^include(if\..*)?\.path$`}}.run(ctx)
	if err != nil {
		var ge *GitError
		if asGitError(err, &ge) && ge.ExitCode == 1 {
			return nil, nil // none
		}
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	var paths []string
	for _, rec := range bytes.Split(out, []byte{0}) {
		_, v, ok := strings.Cut(string(rec), "\n")
		if !ok || v == "" {
			continue
		}
		switch {
		case strings.HasPrefix(v, "~/"):
			home, _ := os.UserHomeDir()
			v = filepath.Join(home, v[2:])
		case !filepath.IsAbs(v):
			v = filepath.Join(filepath.Dir(file), v)
		}
		paths = append(paths, filepath.Clean(v))
	}
	return paths, nil
}

// emptyIsNone reports whether git reads an empty file at p as no file.
func emptyIsNone(p string) bool {
	base, dir := filepath.Base(p), filepath.Base(filepath.Dir(p))
	return base != "commondir" && base != "gitdir" && base != ".git" || dir == "hooks" || dir == "info"
}
