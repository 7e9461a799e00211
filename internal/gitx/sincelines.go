package gitx

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// A call that moved no HEAD (the common case: the agent edits, ralph or
// the user commits later) needs no second git process for its receipt's
// line counts: for each path whose status changed during the call, the
// status record names the HEAD blob (hH), which a fresh commit left as a
// loose object, and the other side is the working file or the index blob.
// linesInProcess computes them; whenever it cannot be sure to give git's
// own answer it gives up as a whole, and SnapshotAfter runs `git diff
// --numstat` as before.

// maxInProcess is the largest file or blob read to count lines in-process.
const maxInProcess = 1 << 20

// binaryProbe is how much of a file git looks at for a NUL byte to call
// it binary (FIRST_FEW_BYTES in git's xdiff-interface.c).
const binaryProbe = 8000

// linesInProcess is what diffLines(before.Head) gives for the paths whose
// state changed from before to after, when HEAD did not move; paths not
// listed do not differ from HEAD. Untracked paths are left to the caller
// (countLines). ok is false when git must be asked.
func linesInProcess(loc location, before, after Snap) (lines map[string]Lines, ok bool) {
	if before.Head == "" || after.Head != before.Head {
		return nil, false
	}
	gitDir, commonDir := loc.gitDirs()
	if gitDir == "" || commonDir == "" || !plainRepo(gitDir, commonDir) {
		return nil, false
	}
	if touchesAttributes(before) || touchesAttributes(after) {
		return nil, false
	}
	objects, err := os.OpenRoot(commonDir)
	if err != nil {
		return nil, false
	}
	defer objects.Close()
	tree, err := os.OpenRoot(loc.root)
	if err != nil {
		return nil, false
	}
	defer tree.Close()
	if _, err := tree.Lstat(".gitattributes"); !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}

	lines = map[string]Lines{}
	for p, fp := range after.Paths {
		if before.Paths[p] == fp || strings.HasPrefix(fp, "?") {
			continue
		}
		l, listed, ok := pathLines(objects, tree, p, fp)
		if !ok {
			return nil, false
		}
		if listed {
			lines[p] = l
		}
	}
	return lines, true
}

// pathLines counts one tracked path's lines from its status record (the
// fingerprint's fields: "1 XY sub mH mI mW hH hI"). listed is false when
// git's diff would not list the path: same mode and content as in HEAD.
func pathLines(objects, tree *os.Root, p, fp string) (l Lines, listed, ok bool) {
	f := strings.SplitN(fp, " ", 9)
	if len(f) < 8 || f[0] != "1" || len(f[1]) != 2 || f[2] != "N..." {
		return Lines{}, false, false // renames, conflicts, submodules
	}
	x, y := f[1][0], f[1][1]
	mH, mI, mW, hH, hI := f[3], f[4], f[5], f[6], f[7]
	if !strings.ContainsRune(".MAD", rune(x)) || !strings.ContainsRune(".MD", rune(y)) ||
		!plainMode(mH) || !plainMode(mI) || !plainMode(mW) {
		return Lines{}, false, false // type changes, links, gitlinks
	}
	if attributesAbove(tree, p) {
		return Lines{}, false, false
	}

	var old, cur []byte
	var err error
	oldMode, curMode := mH, mW
	if mH != "000000" {
		if old, err = readLooseBlob(objects, hH, maxInProcess); err != nil {
			return Lines{}, false, false
		}
	}
	switch {
	case y == 'D':
		curMode = "000000"
	case y == '.':
		// The working file is as the index has it (or git is told to
		// take it so): git's diff reads the index's blob too.
		curMode = mI
		if mI != "000000" {
			cur, err = readLooseBlob(objects, hI, maxInProcess)
		}
	default:
		if mW == "000000" {
			return Lines{}, false, false
		}
		cur, err = readWorkFile(tree, p, maxInProcess)
	}
	if err != nil {
		return Lines{}, false, false
	}
	if oldMode == curMode && bytes.Equal(old, cur) {
		return Lines{}, false, true
	}
	if isBinary(old) || isBinary(cur) {
		return Lines{Added: -1, Removed: -1}, true, true
	}
	// A carriage return is where line-ending conversion would start.
	if bytes.IndexByte(old, '\r') >= 0 || bytes.IndexByte(cur, '\r') >= 0 {
		return Lines{}, false, false
	}
	added, removed, ok := lineDiff(old, cur)
	return Lines{Added: added, Removed: removed}, true, ok
}

// touchesAttributes reports whether an attributes file is among s's
// changed paths: what it says now is not what git counted by.
func touchesAttributes(s Snap) bool {
	for p := range s.Paths {
		if path.Base(p) == ".gitattributes" {
			return true
		}
	}
	return false
}

func plainMode(m string) bool { return m == "000000" || m == "100644" || m == "100755" }

// isBinary is git's buffer_is_binary: a NUL byte near the start.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), binaryProbe)], 0) >= 0
}

// attributesAbove reports whether a directory above p (the root is
// checked once) has a .gitattributes, or cannot be looked at.
func attributesAbove(tree *os.Root, p string) bool {
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if _, err := tree.Lstat(dir + "/.gitattributes"); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// readWorkFile reads a working file through the work tree's root: no
// directory on the way may be a link (git would not look through one
// either), nor the file itself, and it must be a regular file of at most
// limit bytes.
func readWorkFile(tree *os.Root, p string, limit int64) ([]byte, error) {
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		fi, err := tree.Lstat(dir)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, errors.New(dir + ": not a directory")
		}
	}
	fi, err := tree.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New(p + ": not a regular file")
	}
	if fi.Size() > limit {
		return nil, errTooBig
	}
	// O_NONBLOCK: a FIFO put there since the Lstat must not hang the loop.
	f, err := tree.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return nil, errors.New(p + ": replaced while read")
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooBig
	}
	return b, nil
}

// plainRepo reports whether nothing in the repository's configuration or
// attributes could make git's diff count differently from lineDiff: no
// attributes file git reads besides the work tree's (checked per path),
// and configuration files holding only settings known not to bear on it.
// ralph's git reads no system or global configuration (env.go), but does
// read the user's global attributes file.
func plainRepo(gitDir, commonDir string) bool {
	if home := os.Getenv("HOME"); home != "" && exists(filepath.Join(home, ".config", "git", "attributes")) {
		return false
	}
	if exists(filepath.Join(commonDir, "info", "attributes")) {
		return false
	}
	for _, c := range []string{filepath.Join(commonDir, "config"), filepath.Join(commonDir, "config.worktree"), filepath.Join(gitDir, "config.worktree")} {
		if !plainConfig(c) {
			return false
		}
	}
	return true
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// plainSections are configuration sections with nothing that changes what
// `git diff --numstat` counts.
var plainSections = map[string]bool{
	"remote": true, "branch": true, "user": true, "author": true, "committer": true,
	"gc": true, "maintenance": true, "pull": true, "push": true, "fetch": true,
	"init": true, "advice": true, "alias": true, "commit": true, "tag": true,
	"log": true, "color": true, "rerere": true, "credential": true, "http": true,
	"safe": true, "protocol": true, "merge": true, "rebase": true, "status": true,
}

// plainCore are the keys of [core] (and [extensions]) allowed, with the
// value each must have ("" for any).
var plainCore = map[string]string{
	"core.repositoryformatversion": "", "core.bare": "", "core.logallrefupdates": "",
	"core.ignorecase": "", "core.precomposeunicode": "", "core.filemode": "true",
	"extensions.objectformat": "", "extensions.worktreeconfig": "",
}

// plainConfig reports whether a configuration file (missing is fine)
// holds only plain settings.
func plainConfig(file string) bool {
	_, ok := readPlainConfig(file)
	return ok
}

// readPlainConfig reads a configuration file that holds only plain
// settings, returning those of [core] and [extensions] ("section.key",
// lower case, values trimmed). It reads the syntax's simple cases and says
// no to anything else (continued lines, a key on a section's line,
// includes, which are a section of their own).
func readPlainConfig(file string) (map[string]string, bool) {
	values := map[string]string{}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return values, true
	}
	if err != nil || len(b) > 64<<10 {
		return nil, false
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			return nil, false
		}
		if line[0] == '[' {
			head, rest, ok := strings.Cut(line[1:], "]")
			if rest = strings.TrimSpace(rest); !ok || rest != "" && rest[0] != '#' && rest[0] != ';' {
				return nil, false
			}
			name, _, _ := strings.Cut(head, " ")
			name, _, _ = strings.Cut(name, ".")
			section = strings.ToLower(strings.TrimSpace(name))
			continue
		}
		if plainSections[section] {
			continue
		}
		key, value, _ := strings.Cut(line, "=")
		key = section + "." + strings.ToLower(strings.TrimSpace(key))
		want, ok := plainCore[key]
		if !ok {
			return nil, false
		}
		value, _, _ = strings.Cut(value, "#")
		value, _, _ = strings.Cut(value, ";")
		value = strings.ToLower(strings.TrimSpace(value))
		if want != "" && value != want {
			return nil, false
		}
		values[key] = value
	}
	return values, sc.Err() == nil
}
