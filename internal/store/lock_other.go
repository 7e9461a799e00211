//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"syscall"
	"time"
)

// creatingGrace is how long a lock file without a pid is taken to belong to
// a process that created it and is about to write its pid.
const creatingGrace = 5 * time.Second

// acquire creates the lock file exclusively. An existing file whose pid is
// dead (or that never got a pid, after the grace period) is stale: it is
// removed and creation retried.
func acquire(path, holder string) (*Lock, error) {
	stale := 0
	for range 100 {
		f, err := OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			if err := writePID(f, holder); err != nil {
				_ = f.Close()
				_ = os.Remove(path)
				return nil, err
			}
			return &Lock{f: f, path: path, StalePID: stale}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		old, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		pid, name := readPID(old), readHolder(old)
		info, statErr := old.Stat()
		_ = old.Close()
		young := statErr == nil && time.Since(info.ModTime()) < creatingGrace
		if (pid > 0 && alive(pid)) || (pid == 0 && young) {
			return nil, &LockedError{Path: path, PID: pid, Holder: name}
		}
		stale = pid
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, errors.New("lock file keeps being replaced")
}

func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		// FindProcess opens the process on Windows and fails if it is gone.
		_ = p.Release()
		return true
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

func release(l *Lock) error {
	// Close first: Windows cannot remove an open file.
	err := l.f.Close()
	if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}
