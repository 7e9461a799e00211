package agent

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		// Own group: one kill(-pgid) reaches the agent and every tool it
		// started, and a Ctrl-C on ralph's terminal does not hit it twice.
		Setpgid: true,
		// If ralph itself dies (SIGKILL, OOM), the agent is told to stop
		// instead of running on unattended. SIGTERM lets it stop its tools.
		Pdeathsig: syscall.SIGTERM,
	}
}

// groupAlive reports whether a process of the group is still running.
// Zombies do not count: where PID 1 does not reap orphans (some containers
// and sandboxes), killed grandchildren stay zombies for ever, yet they run
// nothing and hold no files.
func groupAlive(pgid int) bool {
	// If ralph is PID 1 or a subreaper, the orphans are ours to reap.
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if err != nil || pid <= 0 {
			break
		}
	}
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	return groupHasLiveProcess(pgid)
}

// groupHasLiveProcess scans /proc for a non-zombie process in the group.
// When /proc cannot be read it answers true, the safe side.
func groupHasLiveProcess(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		state, pg, ok := parseStat(stat)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// parseStat reads the state and process group from /proc/PID/stat:
// "pid (comm) state ppid pgrp ...". comm may hold spaces and parentheses,
// so fields are counted from the last ')'.
func parseStat(b []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}
