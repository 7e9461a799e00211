package redact

import (
	"bytes"
	"io"
	"sync"
)

// maxPending bounds what a Writer holds while waiting for a newline: a
// secret is never longer, and output without newlines must still flow.
const maxPending = 64 << 10

// Writer masks secrets in everything written through it. A secret may be
// split across two writes, so text is passed on a line at a time (a JSON
// line through JSON, so it stays valid); Flush passes on a last line
// without its newline. Safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// NewWriter masks what is written to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write always reports len(p) on success: the caller wrote that much text,
// whatever length its masked form has.
func (r *Writer) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(r.pending, p...)
	i := bytes.LastIndexByte(r.pending, '\n')
	if i < 0 && len(r.pending) < maxPending {
		return len(p), nil
	}
	cut := i + 1
	if i < 0 {
		cut = len(r.pending)
	}
	if err := r.emit(r.pending[:cut]); err != nil {
		return 0, err
	}
	r.pending = append(r.pending[:0], r.pending[cut:]...)
	return len(p), nil
}

func (r *Writer) emit(text []byte) error {
	var out []byte
	for line := range bytes.Lines(text) {
		if t := bytes.TrimSpace(line); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
			out = append(out, JSON(line)...)
		} else {
			out = append(out, Bytes(line)...)
		}
	}
	_, err := r.w.Write(out)
	return err
}

// Flush passes on what is held back (a last line without a newline).
func (r *Writer) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pending) == 0 {
		return nil
	}
	err := r.emit(r.pending)
	r.pending = r.pending[:0]
	return err
}
