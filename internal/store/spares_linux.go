package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

func linksOne(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1
}

func ownedByMe(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// swapWrite writes data to path through its spare (name; "" for none yet:
// a new temporary file then), swapped with path. done is false when it
// wrote nothing and the caller is to write the plain way.
func swapWrite(sp *spareFiles, path, name string, data []byte, perm fs.FileMode, durable bool) (done bool, err error) {
	c, err := confine(path)
	if err != nil {
		return false, nil
	}
	defer c.Close()
	if err := c.mkdirParent(); err != nil {
		return false, nil
	}
	d, err := c.root.Open(filepath.Dir(c.name))
	if err != nil {
		return false, nil
	}
	defer d.Close()
	dfd := int(d.Fd())
	base := filepath.Base(c.name)
	f := openSpare(dfd, name)
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
		return true, fmt.Errorf("write %s: %w", path, err)
	}
	// Over the spare's old bytes, then cut to length: emptying it first
	// would free its blocks only to allocate them again.
	if _, err := f.WriteAt(data, 0); err != nil {
		return fail(err)
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
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
			return fail(c.wrap(err))
		}
	}
	if !swapped {
		if err := unix.Renameat(dfd, name, dfd, base); err != nil {
			return fail(c.wrap(err))
		}
	}
	_ = f.Close() // ends the lease: a reader's open waits no longer
	if swapped {
		sp.give(path, name) // the old file, the next write's spare
	}
	if durable {
		if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
			return true, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return true, nil
}

// openSpare opens the spare name in the directory dfd under a write lease, or returns nil when it may not be rewritten (see
// spareFiles).
func openSpare(dfd int, name string) *os.File {
	if name == "" {
		return nil
	}
	// O_NONBLOCK: an open that would wait on someone else's lease fails.
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), name)
	info, err := f.Stat()
	if err != nil || !spareOK(info) {
		f.Close()
		return nil
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_WRLCK); err != nil {
		f.Close()
		return nil
	}
	return f
}
