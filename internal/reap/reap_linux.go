package reap

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Waiting for a child in os/exec blocks an OS thread in waitid until it
// exits: with 200 agents running, 200 threads the scheduler juggles for
// nothing. The kernel hands out a pidfd for the child instead (Linux 5.3+),
// readable once the child has exited; the runtime's poller waits for that
// as for a socket, on no thread of its own, and cmd.Wait then reaps at once.

// AskPidfd makes Start fill in a pidfd of the child (-1: none).
func AskPidfd(attr *syscall.SysProcAttr) *int {
	fd := -1
	attr.PidFD = &fd
	return &fd
}

// AwaitExit returns once the child behind pidfd has exited, or at once
// when that cannot be watched (cmd.Wait then blocks as before). It closes
// pidfd.
func AwaitExit(pidfd int) {
	if pidfd < 0 {
		return
	}
	if err := syscall.SetNonblock(pidfd, true); err != nil {
		syscall.Close(pidfd)
		return
	}
	f := os.NewFile(uintptr(pidfd), "pidfd") // non-blocking: on the poller
	defer f.Close()
	// os/exec waits on its own duplicate of this pidfd, which shares the
	// non-blocking flag: made blocking again before Wait, or a wait that
	// ended early (a poll cut short by a signal, say) would fail with
	// EAGAIN instead of blocking.
	defer syscall.SetNonblock(pidfd, false)
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 0)
			if err == unix.EINTR {
				continue
			}
			return err != nil || n > 0 // exited, or unknowable: let Wait block
		}
	})
}
