package proc

import "syscall"

// ChildAttr starts a child in its own process group that is sent SIGTERM
// when ralph dies: a kill -9 of ralph leaves nothing of it running.
func ChildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
