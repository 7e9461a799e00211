//go:build unix

package monitor

import (
	"errors"
	"syscall"
)

// processAlive sends signal 0, which checks for the process without
// touching it. EPERM means it exists but belongs to someone else.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
