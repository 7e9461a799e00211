package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Everything ralph writes under a project goes through this file, because a
// repository can commit symbolic links: a .ralph/ralph.lock pointing at
// ~/.bashrc would otherwise be truncated and filled with a pid, and agent
// text appended to a linked ralph.log could become shell start-up code.
//
// Two rules:
//   - A write is confined to a root directory with os.Root (openat with no
//     escape): for a file under a directory named .ralph that root is the
//     project (the .ralph directory's parent), so a linked .ralph or
//     .ralph/logs cannot lead out of it; otherwise the file's own directory
//     (its nearest existing ancestor when it is still to be created).
//   - The file itself is never a link: appends, the lock and log files refuse
//     a link with a *SymlinkError, atomic writes replace it (rename acts on
//     the link, not on its target).

// SymlinkError is a refusal to write through a symbolic link.
type SymlinkError struct{ Path string }

func (e *SymlinkError) Error() string {
	return fmt.Sprintf("refusing to write %s: it is a symbolic link (ralph never writes through links; remove it)", e.Path)
}

// EscapeError is a write whose directory leads out of its root through a
// link (e.g. .ralph or .ralph/logs pointing outside the project).
type EscapeError struct {
	Path, Root string
	Err        error
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("refusing to write %s: a symbolic link in its path leads out of %s", e.Path, e.Root)
}

func (e *EscapeError) Unwrap() error { return e.Err }

// confined is a path split into the root that confines writes to it and
// the name relative to that root.
type confined struct {
	path string // as the caller gave it, for messages
	root *os.Root
	name string // slash-free on Windows is not needed: os.Root takes OS paths
}

func (c *confined) Close() error { return c.root.Close() }

// confine opens the root for a write to path (see the file comment). The
// caller closes it.
func confine(path string) (*confined, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	rootDir := filepath.Dir(abs)
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if filepath.Base(d) == DefaultDirName {
			rootDir = filepath.Dir(d)
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	// Directories still to be created are created inside the root, so it
	// starts at the nearest one that exists.
	for {
		if _, err := os.Stat(rootDir); err == nil || filepath.Dir(rootDir) == rootDir {
			break
		}
		rootDir = filepath.Dir(rootDir)
	}
	r, err := os.OpenRoot(rootDir)
	if err != nil {
		return nil, err
	}
	name, err := filepath.Rel(rootDir, abs)
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return &confined{path: path, root: r, name: name}, nil
}

// wrap turns os.Root's escape refusal into an EscapeError naming the file.
func (c *confined) wrap(err error) error {
	if err == nil {
		return nil
	}
	// os.Root does not export its refusal; its text is stable.
	if strings.Contains(err.Error(), "path escapes from parent") {
		return &EscapeError{Path: c.path, Root: c.root.Name(), Err: err}
	}
	return err
}

// mkdirParent creates the file's directory inside the root.
func (c *confined) mkdirParent() error {
	if d := filepath.Dir(c.name); d != "." {
		return c.wrap(c.root.MkdirAll(d, 0o755))
	}
	return nil
}

// refuseLink fails when the file itself is a link.
func (c *confined) refuseLink() error {
	info, err := c.root.Lstat(c.name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return c.wrap(err)
	case info.Mode()&fs.ModeSymlink != 0:
		return &SymlinkError{Path: c.path}
	}
	return nil
}

// openFile opens the file inside the root, refusing a link.
func (c *confined) openFile(flag int, perm fs.FileMode) (*os.File, error) {
	if flag&os.O_CREATE != 0 {
		if err := c.mkdirParent(); err != nil {
			return nil, err
		}
	}
	if err := c.refuseLink(); err != nil {
		return nil, err
	}
	f, err := c.root.OpenFile(c.name, flag|oNoFollow, perm)
	if err != nil {
		if isLoop(err) {
			return nil, &SymlinkError{Path: c.path} // became a link since the check
		}
		return nil, c.wrap(err)
	}
	return f, nil
}

// OpenFile opens path for writing the way everything ralph writes under a
// project must be opened: never through a link (a *SymlinkError), never out
// of the project through a linked directory (an *EscapeError); the
// directory is created when flag has os.O_CREATE. Use it instead of
// os.OpenFile for logs and other files written in place.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	c, err := confine(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.openFile(flag, perm)
}

// MkdirAll creates dir and its parents, confined like OpenFile: a linked
// .ralph or .ralph/logs leading out of the project is an *EscapeError.
func MkdirAll(dir string) error {
	c, err := confine(filepath.Join(dir, "x"))
	if err != nil {
		return err
	}
	defer c.Close()
	return c.mkdirParent()
}

// tempName is a fresh temporary name next to name, recognisable by
// RemoveStaleTemps.
func tempName(name string) string {
	var b [tempSuffixLen / 2]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+tempMarker+hex.EncodeToString(b[:]))
}
