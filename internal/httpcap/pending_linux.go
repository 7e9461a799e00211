package httpcap

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// pending is how many bytes the kernel holds for c that the server has
// not read yet (-1: unknown). It tells a client that spoke from a silent
// one when the server is too busy to have read either.
func pending(c net.Conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	_ = raw.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ); err == nil {
			n = v
		}
	})
	return n
}
