//go:build unix

package doctor

import (
	"errors"
	"syscall"
)

// freeBytes is the space available to an unprivileged user (Bavail, not
// Bfree: the blocks reserved for root do not help ralph).
func freeBytes(path string) (uint64, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(path, &s); err != nil {
		return 0, err
	}
	// The conversions are needed: the field types differ between systems.
	return uint64(s.Bavail) * uint64(s.Bsize), nil
}

// processAlive asks the kernel with signal 0; EPERM means the process
// exists but belongs to someone else.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
