//go:build unix

package httpcap

import "syscall"

// openFileLimit is the process's soft RLIMIT_NOFILE (0: unknown).
func openFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}
