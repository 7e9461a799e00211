//go:build !linux

package serve

// procStart is unknown here: without it a recorded group cannot be told
// from a reused id, so endGroup does nothing (the agents still get the
// runner's own clean-up and SIGTERM on the daemon's death where supported).
func procStart(int) (uint64, error) { return 0, nil }

func endGroup(int, uint64) bool { return false }
