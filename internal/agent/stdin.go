package agent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// stdinFeed copies Process.Stdin into the agent's standard input through a
// pipe of its own, rather than letting os/exec do it: os/exec's Wait waits
// for that copy, so a tool that inherited stdin and never reads it would
// hold the call open after the agent exited.
type stdinFeed struct {
	src     io.Reader
	r, w    *os.File
	started bool
	done    chan struct{}
	err     error // of the copy; read after done
}

func newStdinFeed(src io.Reader) (*stdinFeed, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("agent: stdin pipe: %w", err)
	}
	return &stdinFeed{src: src, r: r, w: w, done: make(chan struct{})}, nil
}

// start begins the copy once the child holds its own copy of the read end.
func (f *stdinFeed) start() {
	// Ours must go: once the agent exits without reading, writes then fail
	// with EPIPE instead of blocking.
	f.r.Close()
	f.started = true
	go func() {
		defer close(f.done)
		_, f.err = io.Copy(f.w, f.src)
		f.w.Close()
	}()
}

// wait ends the copy after the process group is gone. Whatever still
// blocks it is a process that escaped the group holding stdin: closing
// the write end stops it.
func (f *stdinFeed) wait(timeout time.Duration) []string {
	select {
	case <-f.done:
	default:
		f.w.Close()
		select {
		case <-f.done:
		case <-time.After(timeout):
			return []string{"the agent's stdin source did not finish; stopped feeding it"}
		}
	}
	if f.err != nil && !errors.Is(f.err, syscall.EPIPE) && !errors.Is(f.err, os.ErrClosed) {
		return []string{fmt.Sprintf("feeding the agent's stdin: %v", f.err)}
	}
	return nil
}

// abort releases the pipe when the process never started.
func (f *stdinFeed) abort() {
	if !f.started {
		f.r.Close()
		f.w.Close()
	}
}
