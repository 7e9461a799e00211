package serve

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStart is a process's start time (clock ticks since boot, field 22
// of /proc/PID/stat): with the pid it names one process for ever.
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields count from its ")".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// endGroup kills what is left of an agent process group a dead daemon
// recorded. The group is ours if its leader is the recorded process, or
// gone: Linux never hands out a pid that is still some group's id, so a
// leaderless group with members is still the agent's (its tools). A
// leader with another start time is somebody else's: left alone.
func endGroup(pgid int, start uint64) bool {
	if pgid <= 1 {
		return false
	}
	if st, err := procStart(pgid); err == nil && st != start {
		return false
	}
	return syscall.Kill(-pgid, syscall.SIGKILL) == nil
}
