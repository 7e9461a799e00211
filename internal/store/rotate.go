package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"ralph/internal/redact"
)

// Rotation defaults for logs/ralph.log: at most 10 MB live plus four old
// files, so a loop left running for weeks uses at most ~50 MB of log.
const (
	DefaultLogMaxBytes = 10 << 20
	DefaultLogKeep     = 4
)

// RotatingWriter appends to a log file and rotates it by size: when a write
// would take the file past MaxBytes, path becomes path.1, path.1 becomes
// path.2 and so on, the oldest beyond Keep is deleted, and a new path is
// started. Each Write lands whole in one file (a log line is never split
// across a rotation). It is safe for concurrent use by goroutines; only one
// process should write a given log (the run lock sees to that for ralph.log).
type RotatingWriter struct {
	path     string
	maxBytes int64
	keep     int

	mu   sync.Mutex
	f    *os.File
	size int64
}

// NewRotatingWriter opens path for appending, creating it and its directory
// if needed. maxBytes <= 0 turns rotation off; keep < 0 is taken as 0, which
// rotates by truncation without keeping old files.
func NewRotatingWriter(path string, maxBytes int64, keep int) (*RotatingWriter, error) {
	w := &RotatingWriter{path: path, maxBytes: maxBytes, keep: max(keep, 0)}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *RotatingWriter) open() error {
	f, err := OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("open log: %w", err)
	}
	w.f, w.size = f, info.Size()
	return nil
}

// Write appends p with its secrets masked (see package redact), rotating
// first if it would not fit. A single write larger than MaxBytes goes whole
// into a fresh file rather than being split. Callers write whole lines, so
// a secret is never split between two writes.
func (w *RotatingWriter) Write(p []byte) (int, error) {
	n := len(p)
	p = redact.Bytes(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, fmt.Errorf("write %s: %w", w.path, fs.ErrClosed)
	}
	if w.maxBytes > 0 && w.size > 0 && w.size+int64(len(p)) > w.maxBytes {
		if err := w.rotate(); err != nil {
			return 0, err
		}
	}
	m, err := w.f.Write(p)
	w.size += int64(m)
	if err != nil {
		return 0, err
	}
	return n, nil
}

// rotate shifts the old files up by one and starts a new live file. If a
// rename fails the live file is reopened anyway, so logging goes on (into an
// oversized file) instead of stopping the loop over a log.
func (w *RotatingWriter) rotate() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("rotate %s: %w", w.path, err)
	}
	w.f = nil
	var errs []error
	if w.keep == 0 {
		errs = append(errs, removeIfExists(w.path))
	} else {
		errs = append(errs, removeIfExists(w.old(w.keep)))
		for i := w.keep - 1; i >= 1; i-- {
			errs = append(errs, renameIfExists(w.old(i), w.old(i+1)))
		}
		errs = append(errs, renameIfExists(w.path, w.old(1)))
	}
	errs = append(errs, w.open())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rotate %s: %w", w.path, err)
	}
	return nil
}

func (w *RotatingWriter) old(i int) string { return fmt.Sprintf("%s.%d", w.path, i) }

func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func renameIfExists(from, to string) error {
	if err := os.Rename(from, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Sync flushes the live file to disk.
func (w *RotatingWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	return w.f.Sync()
}

// Close closes the live file; later writes fail with fs.ErrClosed.
func (w *RotatingWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
