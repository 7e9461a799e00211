// Package syncbuf is a bytes.Buffer that a process's output goroutines
// write while a test or a harness reads it.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent Write and String. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
