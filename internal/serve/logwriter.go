package serve

import (
	"io"
	"sync"

	"ralph/internal/redact"
)

// syncWriter serialises log lines from many loops, their secrets masked
// (each write is whole lines: a log line, a warning).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.Write(redact.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// prefixWriter prefixes each write (a warning line) with the session.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
