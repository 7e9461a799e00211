//go:build unix && !linux

package proc

import "syscall"

// ChildAttr starts a child in its own process group; where there is no
// parent-death signal, ralph's clean-up ends it.
func ChildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
