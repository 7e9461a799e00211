//go:build !unix

package monitor

// processAlive cannot ask cheaply here, so a loop is taken at its word:
// a crashed one shows its last status instead of "not running".
func processAlive(int) bool { return true }
