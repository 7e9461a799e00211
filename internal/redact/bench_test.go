package redact

import (
	"strings"
	"testing"
)

// A state write of ordinary text skips every shape rule.
func BenchmarkStringPlain(b *testing.B) {
	s := strings.Repeat("loop 12: in_progress in 2m31s, 3 files changed; ", 1000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = String(s)
	}
}
