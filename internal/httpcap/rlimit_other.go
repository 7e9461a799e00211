//go:build !unix

package httpcap

// openFileLimit is unknown here.
func openFileLimit() uint64 { return 0 }
