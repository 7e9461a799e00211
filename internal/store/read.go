package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ralph/internal/plan"
)

// What ralph reads from a project goes to the agent (the prompt) or decides
// what the loop does (the plan), and a cloned repository chooses it: a
// .ralph/PROMPT.md that is a link to ~/.ssh/id_ed25519 would put the key in
// the agent's command line, where the model provider and ps see it. So
// reads follow the write rule (safe.go), plus a size cap:
//   - A read is confined to a root with os.Root: the project for a file
//     inside it, so a linked .ralph or a linked directory on the way cannot
//     lead out of it; a file outside the project (a prompt the user named
//     with --prompt, the daemon's task files) is confined to its own
//     directory.
//   - The file itself is never a link, and must be a regular file (a FIFO
//     would block the open, a device could be endless).
//   - Its size is checked on the open file before anything is read, and the
//     read stops one byte past the limit, so a huge or growing file costs
//     no memory.

// Caps on what ralph reads. The plan and the daemon's task files hold a
// checklist that is parsed whole; the prompt goes into the agent's command
// line, which the kernel limits far below this anyway.
const (
	MaxPlanSize   = 8 << 20 // fix_plan.md, a daemon task file
	MaxPromptSize = 1 << 20 // PROMPT.md (or PROMPT_FILE), AGENT.md, a daemon session's prompt
)

// ReadError is a refusal to read a file: a link, a path that leads out of
// its root through a link, or something other than a regular file.
type ReadError struct {
	Path, Root string
	Why        string
	Err        error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("refusing to read %s: %s", e.Path, e.Why)
}

func (e *ReadError) Unwrap() error { return e.Err }

// TooLargeError is a file over its read cap.
type TooLargeError struct {
	Path        string
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("refusing to read %s: it is %s, over the %s limit for this file", e.Path, humanSize(e.Size), humanSize(e.Limit))
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

const notRegular = "not a regular file"

const linkWhy = "it is a symbolic link (ralph never reads a project's files through links; put the file itself there)"

// readRoot opens the root that confines a read of path: root when path
// lies inside it, else path's own directory. name is path relative to it.
func readRoot(root, path string) (r *os.Root, name string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Dir(abs)
	if root != "" {
		if ra, err := filepath.Abs(root); err == nil {
			if rel, err := filepath.Rel(ra, abs); err == nil && filepath.IsLocal(rel) {
				dir = ra
			}
		}
	}
	r, err = os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	name, err = filepath.Rel(dir, abs)
	if err != nil {
		_ = r.Close()
		return nil, "", err
	}
	return r, name, nil
}

func readWrap(path string, r *os.Root, err error) error {
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "path escapes from parent"): // os.Root's refusal, not exported
		return &ReadError{Path: path, Root: r.Name(), Err: err,
			Why: "a symbolic link in its path leads out of " + r.Name()}
	case isLoop(err):
		return &ReadError{Path: path, Root: r.Name(), Err: err, Why: linkWhy}
	}
	return err
}

// statIn is the check before a read: the file's mode, or a *ReadError for
// a link, an escape or a file that is not regular, or a *TooLargeError.
// A missing file is an error satisfying errors.Is(err, fs.ErrNotExist).
func statIn(r *os.Root, name, path string, limit int64) (fs.FileInfo, error) {
	info, err := r.Lstat(name)
	if err != nil {
		return nil, readWrap(path, r, err)
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return nil, &ReadError{Path: path, Root: r.Name(), Why: linkWhy}
	case !info.Mode().IsRegular():
		return nil, &ReadError{Path: path, Root: r.Name(), Why: notRegular}
	case limit > 0 && info.Size() > limit:
		return nil, &TooLargeError{Path: path, Size: info.Size(), Limit: limit}
	}
	return info, nil
}

// CheckIn tells whether path could be read under root within limit
// without reading it (see ReadIn). A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist).
func CheckIn(root, path string, limit int64) error {
	r, name, err := readRoot(root, path)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = statIn(r, name, path, limit)
	return err
}

// ReadIn reads path the way ralph reads every file a repository can
// supply: confined to root (or to path's own directory when path is not
// inside root), never through a link, only a regular file, and at most
// limit bytes (limit <= 0: no cap). A refusal is a *ReadError or a
// *TooLargeError naming path; a missing file satisfies
// errors.Is(err, fs.ErrNotExist).
func ReadIn(root, path string, limit int64) ([]byte, error) {
	r, name, err := readRoot(root, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if _, err := statIn(r, name, path, limit); err != nil {
		return nil, err
	}
	// O_NONBLOCK: a FIFO swapped in since the check must not hang the open.
	f, err := r.OpenFile(name, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, readWrap(path, r, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &ReadError{Path: path, Root: r.Name(), Why: notRegular}
	}
	if limit > 0 && info.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: info.Size(), Limit: limit}
	}
	var src io.Reader = f
	if limit > 0 {
		src = io.LimitReader(f, limit+1) // a file growing while read
	}
	data, err := io.ReadAll(src)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}

// LoadPlan reads the plan at path with ReadIn under root and MaxPlanSize,
// and parses it with o. The error names the file; errors.Is(err,
// fs.ErrNotExist) tells a missing plan apart.
func LoadPlan(root, path string, o plan.Options) (plan.Plan, error) {
	src, err := ReadIn(root, path, MaxPlanSize)
	if err != nil {
		return plan.Plan{}, fmt.Errorf("load plan: %w", err)
	}
	return o.Parse(src), nil
}

// IsReadRefusal reports a refusal by ReadIn or CheckIn (a link, an escape,
// a file that is not regular, a file over its cap), as opposed to a file
// that is missing or could not be opened.
func IsReadRefusal(err error) bool {
	var re *ReadError
	var te *TooLargeError
	return errors.As(err, &re) || errors.As(err, &te)
}
