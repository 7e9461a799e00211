//go:build unix && !linux

package agent

import "syscall"

// running reports whether pid exists (zombies included: no /proc here).
func running(pid int) bool { return syscall.Kill(pid, 0) == nil }
