//go:build !linux

package store

import "io/fs"

// swapWrite needs renameat2 and leases: elsewhere writes go the plain way.
func swapWrite(*spareFiles, string, string, []byte, fs.FileMode, bool) (bool, error) {
	return false, nil
}
