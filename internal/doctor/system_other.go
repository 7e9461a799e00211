//go:build !unix

package doctor

import "errors"

var errUnsupported = errors.New("not measured on this system")

func freeBytes(string) (uint64, error) { return 0, errUnsupported }
