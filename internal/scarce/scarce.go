// Package scarce tells a shortage of the machine's resources (a full disk,
// a spent quota, no file descriptors left) from every other error, in one
// place. Such an error says nothing about the work: the same write or the
// same agent start succeeds once space or descriptors come back, so a loop
// waits and retries instead of halting or counting a failed iteration.
package scarce

import (
	"errors"
	"io/fs"
	"syscall"
	"time"
)

// Kind is what ran out; "" when the error is not a shortage.
type Kind string

// The shortages.
const (
	DiskFull Kind = "disk full"               // ENOSPC, EDQUOT
	NoFiles  Kind = "out of file descriptors" // EMFILE, ENFILE
)

// Of classifies err: DiskFull, NoFiles or "".
func Of(err error) Kind {
	if err == nil {
		return ""
	}
	var m *marked
	if errors.As(err, &m) {
		return m.kind
	}
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return DiskFull
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return NoFiles
	}
	return ""
}

// Mark says err is a shortage of kind k, for errors that do not carry the
// errno (SQLite reports a full disk as SQLITE_FULL). A nil err stays nil.
func Mark(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &marked{kind: k, err: err}
}

type marked struct {
	kind Kind
	err  error
}

func (m *marked) Error() string { return m.err.Error() }
func (m *marked) Unwrap() error { return m.err }

// Reason is what a loop waiting on err shows: "disk full writing PATH;
// retrying". The path comes from the error when it carries one ("writing
// PATH" on a full disk, "opening PATH" without descriptors), what
// otherwise ("" leaves it out).
func Reason(err error, what string) string {
	k := Of(err)
	if k == "" {
		return ""
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "" {
		what = "writing " + pe.Path
		if k == NoFiles {
			what = "opening " + pe.Path
		}
	}
	s := string(k)
	if what != "" {
		s += " " + what
	}
	return s + "; retrying"
}

// Back-off bounds: the first retry comes soon (a log rotation or a cleanup
// may free space at once), later ones no more often than MaxBackoff, so a
// machine out of space for hours is not hammered, yet a loop resumes within
// MaxBackoff of space coming back.
const (
	FirstBackoff = time.Second
	MaxBackoff   = 30 * time.Second
)

// Backoff is the wait before retry n (0 for the first): FirstBackoff,
// doubled each time, at most MaxBackoff.
func Backoff(n int) time.Duration {
	d := FirstBackoff
	for range max(n, 0) {
		d *= 2
		if d >= MaxBackoff {
			return MaxBackoff
		}
	}
	return d
}
