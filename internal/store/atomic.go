package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"ralph/internal/redact"
)

// tempMarker sits between a target's name and the random suffix of its
// temporary file, so stale temporaries can be recognised later.
const tempMarker = ".tmp-"

// WriteFileAtomic replaces path with data so that readers and a crash see
// either the old content or the new, never a torn file: the data goes to a
// temporary file in the same directory (a rename is only atomic within one
// file system), is fsynced, renamed over path, and the directory is fsynced
// so the rename itself survives a power cut.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return writeAtomic(path, data, perm, true)
}

// WriteViewAtomic is WriteFileAtomic without the fsyncs, for views that are
// rewritten from the truth (status.json, the breaker and rate-limit files
// written from the state document): readers still never see a torn file,
// and after a power cut the next save writes them again.
func WriteViewAtomic(path string, data []byte, perm fs.FileMode) error {
	return writeAtomic(path, data, perm, false)
}

func writeAtomic(path string, data []byte, perm fs.FileMode, durable bool) (err error) {
	c, err := confine(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer c.Close()
	// O_EXCL never follows a link, and the rename below replaces a link at
	// path instead of writing through it.
	tmp := tempName(c.name)
	f, err := c.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, c.wrap(err))
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = c.root.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	// The temporary file is 0600; state files are meant to be readable
	// by monitors running as the same user and by the user's tools.
	if err = f.Chmod(perm); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if durable {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = c.root.Rename(tmp, c.name); err != nil {
		return c.wrap(err)
	}
	if !durable {
		return nil
	}
	return c.syncDir()
}

// syncDir makes a rename in the file's directory durable.
func (c *confined) syncDir() error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := c.root.Open(filepath.Dir(c.name))
	if err != nil {
		return c.wrap(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	return nil
}

// syncDir makes a rename in dir durable. Windows cannot open a directory for
// syncing and some file systems refuse the call; there the rename is as
// durable as the platform allows, which is not worth failing a write for.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	return nil
}

// WriteJSON writes v as indented JSON (people read these files with cat and
// jq) with a final newline, atomically. Secrets are masked: state files
// quote agent output and error messages.
func WriteJSON(path string, v any) error { return (*Store)(nil).writeJSON(path, v, true) }

// WriteViewJSON is WriteJSON for views (see WriteViewAtomic).
func WriteViewJSON(path string, v any) error { return (*Store)(nil).writeJSON(path, v, false) }

// writeJSON is WriteJSON (durable) or WriteViewJSON, through the store's
// spare files when s is not nil.
func (s *Store) writeJSON(path string, v any, durable bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return s.writeAtomic(path, redact.Encoded(append(data, '\n')), 0o644, durable)
}

// CorruptError reports a state file that exists but does not decode. Line
// and Col (1-based, Col counted in characters) locate the problem; both are
// 0 when the decoder gave no position (e.g. a bad timestamp value).
type CorruptError struct {
	Path      string
	Line, Col int
	Err       error
}

func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: corrupt file: %v", e.Path, e.Line, e.Col, e.Err)
	}
	return fmt.Sprintf("%s: corrupt file: %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ReadJSON decodes the JSON file at path into v. A missing file gives an
// error matching fs.ErrNotExist (the caller starts fresh, nothing to report);
// a file that exists but does not decode, including an empty or truncated
// one, gives a *CorruptError (the caller reports it and calls Recover).
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return DecodeJSON(path, data, v)
}

// DecodeJSON is ReadJSON for bytes already read, for callers that look at a
// file before deciding how to decode it (legacy formats). path only names
// the file in the error.
func DecodeJSON(path string, data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &CorruptError{Path: path, Line: 1, Col: 1, Err: errors.New("empty file")}
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	ce := &CorruptError{Path: path, Err: err}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		ce.Line, ce.Col = Position(data, syn.Offset)
	case errors.As(err, &typ):
		ce.Line, ce.Col = Position(data, typ.Offset)
	}
	return ce
}

// Position converts a decoder offset ("the error occurred after reading
// offset bytes") into the 1-based line and column of the last byte read,
// which is the byte that broke the parse, or the last byte of a truncated
// file. Columns count characters, so they match what an editor shows.
func Position(data []byte, offset int64) (line, col int) {
	pos := int(min(max(offset-1, 0), int64(len(data))))
	if pos == len(data) && pos > 0 {
		pos-- // offset past the end: point at the last byte
	}
	for pos > 0 && !utf8.RuneStart(data[pos]) {
		pos-- // inside a multi-byte character: point at the character
	}
	before := data[:pos]
	line = 1 + bytes.Count(before, []byte{'\n'})
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[lineStart:])
}

// Recover moves a corrupt file aside to "<path>.corrupt-<UTC time>" so its
// bytes are kept for inspection while the caller starts fresh, and returns
// the new name. The caller reports both names; Recover only moves.
func Recover(path string) (string, error) { return recoverAt(path, time.Now()) }

func recoverAt(path string, now time.Time) (string, error) {
	stamp := path + ".corrupt-" + now.UTC().Format(compactTime)
	dst := stamp
	// Two recoveries of the same file within a second must not overwrite
	// the first kept copy.
	for i := 2; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		} else if err != nil {
			return "", fmt.Errorf("recover %s: %w", path, err)
		}
		dst = fmt.Sprintf("%s-%d", stamp, i)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("recover %s: %w", path, err)
	}
	return dst, syncDir(filepath.Dir(path))
}

// compactTime is the UTC timestamp used in file names: sortable, and free
// of ':' which Windows does not allow in names.
const compactTime = "20060102T150405Z"

// IsTempName reports a name of the temporary files WriteFileAtomic makes
// (tempName): ".<name>.tmp-" and 16 lower-case hex digits, exactly, so a
// sweep never takes a user's ".notes.tmp-old" for one.
func IsTempName(name string) bool {
	i := strings.LastIndex(name, tempMarker)
	if !strings.HasPrefix(name, ".") || i < 2 {
		return false
	}
	suffix := name[i+len(tempMarker):]
	if len(suffix) != tempSuffixLen {
		return false
	}
	for _, c := range suffix {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// tempSuffixLen is the length of a temporary name's random hex suffix.
const tempSuffixLen = 16

// RemoveStaleTemps deletes temporary files that WriteFileAtomic left in dir
// when its process was killed mid-write, if they are older than age (a
// younger one may belong to a write still in progress in another process).
// It returns the names removed.
func RemoveStaleTemps(dir string, age time.Duration, now time.Time) ([]string, error) {
	if info, err := os.Lstat(dir); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return nil, &SymlinkError{Path: dir}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !IsTempName(name) {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < age {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}
