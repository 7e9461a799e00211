//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"os"
	"syscall"
)

// acquire locks with flock. The lock file is removed on release, so after
// locking we check that the file we locked is still the one at path: a
// holder releasing between our open and our flock would otherwise leave us
// holding a lock on a deleted file while a third process locks a new one.
func acquire(path, holder string) (*Lock, error) {
	for range 100 {
		f, err := OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) {
			le := holderOf(f, path)
			_ = f.Close()
			return nil, le
		}
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		locked, err1 := f.Stat()
		current, err2 := os.Lstat(path)
		if err1 != nil || err2 != nil || !os.SameFile(locked, current) {
			_ = f.Close()
			continue
		}
		// Nobody holds the lock, so a pid in the file belongs to a holder
		// that died without releasing it.
		l := &Lock{f: f, path: path, StalePID: readPID(f)}
		if err := writePID(f, holder); err != nil {
			_ = f.Close()
			return nil, err
		}
		return l, nil
	}
	return nil, errors.New("lock file keeps being replaced")
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// release removes the file while still holding the lock, then unlocks; see
// acquire for why waiting processes cope with that.
func release(l *Lock) error {
	err := os.Remove(l.path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return errors.Join(err, flock(l.f, syscall.LOCK_UN), l.f.Close())
}
