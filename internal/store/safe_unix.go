//go:build unix

package store

import (
	"errors"
	"syscall"
)

// oNoFollow makes the final open fail on a link that appeared after the
// Lstat check, instead of following it.
const oNoFollow = syscall.O_NOFOLLOW

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
