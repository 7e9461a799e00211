//go:build unix

package store

import (
	"errors"
	"syscall"
)

// oNoFollow makes the final open fail on a link that appeared after the
// Lstat check, instead of following it.
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock keeps a read's open from hanging on a FIFO swapped in after
// the check.
const oNonBlock = syscall.O_NONBLOCK

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
