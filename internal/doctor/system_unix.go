//go:build unix

package doctor

import "syscall"

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
