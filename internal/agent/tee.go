package agent

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"ralph/internal/redact"
)

// Bounds of the live line tee. A stream-json line can carry a whole file
// (a Write call, a Read result); longer lines reach the callback cut, and
// the queue drops lines rather than grow without bound.
const (
	maxLiveLine   = 4 << 20
	maxQueuedLine = 1024
	maxQueuedSize = 32 << 20
)

// lineTee copies an agent's output pipe into its log file, masking the
// secrets ralph knows by value on the way (redact.Stream: a secret split
// across two reads is masked whole), and hands complete lines to a
// callback, when there is one, on a separate goroutine, so that a slow
// callback never slows the agent and the file never misses a byte.
type lineTee struct {
	r      *os.File
	file   io.Writer
	onLine func([]byte) // nil: the log file alone
	mask   redact.Stream

	lines  chan []byte
	queued atomic.Int64 // bytes waiting in lines

	// Owned by the reader goroutine until readDone is closed.
	pending  []byte
	cut      bool // the pending line overflowed and is being skipped
	dropped  int
	writeErr error

	readDone, consumeDone chan struct{}
}

func newLineTee(r *os.File, file io.Writer, onLine func([]byte)) *lineTee {
	return &lineTee{
		r: r, file: file, onLine: onLine,
		lines:    make(chan []byte, maxQueuedLine),
		readDone: make(chan struct{}), consumeDone: make(chan struct{}),
	}
}

func (t *lineTee) start() {
	go t.read()
	go t.consume()
}

func (t *lineTee) read() {
	defer close(t.readDone)
	defer close(t.lines)
	buf := make([]byte, 64<<10)
	for {
		n, err := t.r.Read(buf)
		if n > 0 {
			t.pass(t.mask.Next(buf[:n]))
		}
		if err != nil {
			break
		}
	}
	t.pass(t.mask.End())
	if len(t.pending) > 0 || t.cut {
		t.emit()
	}
}

// pass writes masked output to the file and splits it into lines.
func (t *lineTee) pass(b []byte) {
	if len(b) == 0 {
		return
	}
	if _, err := t.file.Write(b); err != nil && t.writeErr == nil {
		t.writeErr = err // keep draining: a full disk must not block the agent
	}
	if t.onLine != nil {
		t.split(b)
	}
}

func (t *lineTee) split(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if room := maxLiveLine - len(t.pending); len(chunk) > room {
			chunk = chunk[:room]
			t.cut = true
		}
		t.pending = append(t.pending, chunk...)
		if i < 0 {
			return
		}
		t.emit()
		b = b[i+1:]
	}
}

func (t *lineTee) emit() {
	line := bytes.TrimSuffix(t.pending, []byte("\r"))
	line = append([]byte(nil), line...)
	t.pending, t.cut = t.pending[:0], false
	if len(t.lines) == cap(t.lines) || t.queued.Load()+int64(len(line)) > maxQueuedSize {
		t.dropped++
		return
	}
	t.queued.Add(int64(len(line)))
	t.lines <- line // cannot block: only this goroutine sends
}

func (t *lineTee) consume() {
	defer close(t.consumeDone)
	for line := range t.lines {
		t.queued.Add(-int64(len(line)))
		t.onLine(line)
	}
}

// wait lets the tee finish after the process group is gone. A process that
// escaped the group may still hold the pipe; after timeout the read end is
// closed to stop waiting for it.
func (t *lineTee) wait(timeout time.Duration) []string {
	var warnings []string
	select {
	case <-t.readDone:
	case <-time.After(timeout):
		t.r.Close()
		<-t.readDone
		warnings = append(warnings, "agent output pipe still open after the agent exited (a process escaped its group); stopped reading")
	}
	<-t.consumeDone
	if t.dropped > 0 {
		warnings = append(warnings, fmt.Sprintf("live view skipped %d output lines (display too slow); the log file has them all", t.dropped))
	}
	if t.writeErr != nil {
		warnings = append(warnings, fmt.Sprintf("writing agent output log: %v", t.writeErr))
	}
	return warnings
}
