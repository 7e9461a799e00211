package reap

import (
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// os/exec waits on its own duplicate of the pidfd, which shares its
// flags: left non-blocking, a Wait that came early would fail with EAGAIN
// instead of blocking.
func TestAwaitExitLeavesThePidfdBlocking(t *testing.T) {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	fd := AskPidfd(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if *fd < 0 {
		t.Fatal("no pidfd on this kernel")
	}
	dup, err := unix.FcntlInt(uintptr(*fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dup)
	AwaitExit(*fd)
	flags, err := unix.FcntlInt(uintptr(dup), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.O_NONBLOCK != 0 {
		t.Error("the pidfd os/exec waits on is left non-blocking")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}
