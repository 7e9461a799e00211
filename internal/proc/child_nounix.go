//go:build !unix

package proc

import "syscall"

// ChildAttr is the default where there are no process groups.
func ChildAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
