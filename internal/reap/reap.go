// Package reap waits for child processes on the runtime's poller instead of
// a thread blocked in waitid.
package reap

import (
	"os/exec"
	"syscall"
)

// Run is cmd.Run, the wait for the exit on the poller. A thread blocked in
// waitid keeps its P in a system call, so the runtime's monitor thread
// keeps waking every 20µs for as long as the child runs (a loop's git
// calls: about a tenth of ralph's own CPU); on the poller every P goes idle
// and the monitor sleeps.
func Run(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	fd := AskPidfd(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		if *fd >= 0 {
			syscall.Close(*fd)
		}
		return err
	}
	AwaitExit(*fd)
	return cmd.Wait()
}
