//go:build !unix

// Package proc answers questions about other processes.
package proc

import "os"

// Alive reports whether a process with this pid can be found. Without
// signal 0 this is the best available answer; it errs towards alive.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	_, err := os.FindProcess(pid)
	return err == nil
}
