//go:build unix && !linux

package agent

// LeftoverGroups cannot tell a leftover agent group from an unrelated one
// that reuses its number without /proc, so it finds none here; the kernel
// still sends no signal to grandchildren when ralph is killed.
func LeftoverGroups(pgids []int, token string) []int { return nil }

// MarkedGroups finds none without /proc, for the same reason.
func MarkedGroups(token string) []int { return nil }
