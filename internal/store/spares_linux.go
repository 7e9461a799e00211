package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// swapWrite writes data to path through its spare (name; "" for none yet:
// a new temporary file then), swapped with path. done is false when it
// wrote nothing and the caller is to write the plain way.
func swapWrite(sp *spareFiles, path, name string, data []byte, perm fs.FileMode, durable bool) (done bool, err error) {
	d, release, err := sp.dirOf(path)
	if err != nil {
		return false, nil
	}
	defer release()
	rc, err := d.SyscallConn()
	if err != nil {
		return false, nil
	}
	// Control holds the directory open while it runs (a release that
	// closes it waits), so its descriptor is never another file's.
	if cerr := rc.Control(func(fd uintptr) {
		done, err = swapIn(sp, int(fd), path, name, data, perm, durable)
	}); cerr != nil {
		return false, nil
	}
	return done, err
}

func swapIn(sp *spareFiles, dfd int, path, name string, data []byte, perm fs.FileMode, durable bool) (done bool, err error) {
	base := filepath.Base(path)
	f, info := openSpare(dfd, name)
	if f == nil {
		if name != "" {
			_ = unix.Unlinkat(dfd, name, 0)
		}
		name = filepath.Base(tempName(base))
		fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return false, nil
		}
		f = os.NewFile(uintptr(fd), name)
	}
	defer f.Close()
	fail := func(err error) (bool, error) {
		_ = unix.Unlinkat(dfd, name, 0)
		return true, pathError(path, err)
	}
	// Over the spare's old bytes, then cut to length: emptying it first
	// would free its blocks only to allocate them again.
	if _, err := f.WriteAt(data, 0); err != nil {
		return fail(err)
	}
	if info == nil || info.Size > int64(len(data)) {
		if err := f.Truncate(int64(len(data))); err != nil {
			return fail(err)
		}
	}
	if info == nil || fs.FileMode(info.Mode).Perm() != perm {
		if err := f.Chmod(perm); err != nil {
			return fail(err)
		}
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	// Only a plain file is swapped aside; a link or anything else at path
	// is replaced or refused by a rename, as without spares.
	var st unix.Stat_t
	swapped := false
	if unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		switch err := unix.Renameat2(dfd, name, dfd, base, unix.RENAME_EXCHANGE); {
		case err == nil:
			swapped = true
		case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOENT):
			// A file system that cannot swap, or path gone since.
		default:
			return fail(err)
		}
	}
	if !swapped {
		if err := unix.Renameat(dfd, name, dfd, base); err != nil {
			return fail(err)
		}
	}
	_ = f.Close() // ends the lease: a reader's open waits no longer
	if swapped {
		sp.give(path, name) // the old file, the next write's spare
	}
	if durable {
		if err := unix.Fsync(dfd); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
			return true, pathError(path, err)
		}
	}
	return true, nil
}

// dirOf is the directory of path, opened confined (see safe.go) by the
// first write there and kept while the run keeps spares, as long as the
// same directory is found at its path (a check of one lstat, where opening
// it confined again takes half a dozen calls). release is for the caller
// to call when done with it.
func (sp *spareFiles) dirOf(path string) (d *os.File, release func(), err error) {
	dir := filepath.Dir(path)
	sp.mu.Lock()
	kept := sp.dirs[dir]
	sp.mu.Unlock()
	if kept != nil {
		if now, err := os.Lstat(dir); err == nil && now.IsDir() && os.SameFile(now, kept.info) {
			return kept.f, func() {}, nil
		}
	}
	c, err := confine(path)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	if err := c.mkdirParent(); err != nil {
		return nil, nil, err
	}
	if d, err = c.root.Open(filepath.Dir(c.name)); err != nil {
		return nil, nil, err
	}
	info, err := d.Stat()
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.on {
		return d, func() { d.Close() }, nil
	}
	if sp.dirs == nil {
		sp.dirs = map[string]*keptDirFile{}
	}
	if old := sp.dirs[dir]; old != nil {
		old.f.Close() // Control calls still running hold it until they end
	}
	sp.dirs[dir] = &keptDirFile{f: d, info: info}
	return d, func() {}, nil
}

// openSpare opens the spare name in the directory dfd under a write
// lease, with what it is, or returns nil when it may not be rewritten (see
// spareFiles).
func openSpare(dfd int, name string) (*os.File, *unix.Stat_t) {
	if name == "" {
		return nil, nil
	}
	// O_NONBLOCK: an open that would wait on someone else's lease fails.
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || !spareOK(&st) || setLease(fd) != nil {
		unix.Close(fd)
		return nil, nil
	}
	return os.NewFile(uintptr(fd), name), &st
}

// spareOK reports whether a spare opened for writing may be rewritten: a
// plain file of this user's with no other link.
func spareOK(st *unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1 && int(st.Uid) == os.Geteuid()
}

func setLease(fd int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK)
	return err
}

// pathError names the file being written in full: the spare's own error
// names it relative to its directory, and a loop waiting on a full disk
// shows the path the error carries.
func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: "write", Path: path, Err: err}
}
