//go:build unix && !linux

package agent

import "syscall"

func sysProcAttr() *syscall.SysProcAttr {
	// Own group: one kill(-pgid) reaches the agent and every tool it
	// started, and a Ctrl-C on ralph's terminal does not hit it twice.
	return &syscall.SysProcAttr{Setpgid: true}
}

// groupAlive reports whether the group still has a process. Without /proc,
// zombies left by a PID 1 that does not reap count as alive; the wait then
// ends at its deadline with a warning.
func groupAlive(pgid int) bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if err != nil || pid <= 0 {
			break
		}
	}
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}
