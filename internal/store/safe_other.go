//go:build !unix

package store

// Elsewhere the Lstat check before the open is the only guard.
const oNoFollow = 0

const oNonBlock = 0

func isLoop(error) bool { return false }
