package scarce

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Kind
	}{
		{nil, ""},
		{errors.New("no space left on device"), ""}, // words are not an errno
		{syscall.ENOSPC, DiskFull},
		{syscall.EDQUOT, DiskFull},
		{syscall.EMFILE, NoFiles},
		{syscall.ENFILE, NoFiles},
		{syscall.EACCES, ""},
		{syscall.EIO, ""},
		{&fs.PathError{Op: "write", Path: "/h/x", Err: syscall.ENOSPC}, DiskFull},
		{fmt.Errorf("write state: %w", &os.SyscallError{Syscall: "pipe2", Err: syscall.EMFILE}), NoFiles},
		{fmt.Errorf("save: %w", Mark(DiskFull, errors.New("database or disk is full (13)"))), DiskFull},
		{Mark(NoFiles, nil), ""},
	} {
		if got := Of(tc.err); got != tc.want {
			t.Errorf("Of(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		err        error
		what, want string
	}{
		{&fs.PathError{Op: "write", Path: "/h/handoffs/a-task.md", Err: syscall.ENOSPC}, "the task file", "disk full writing /h/handoffs/a-task.md; retrying"},
		{Mark(DiskFull, errors.New("database or disk is full")), "writing ralph.db", "disk full writing ralph.db; retrying"},
		{syscall.EMFILE, "starting the agent", "out of file descriptors starting the agent; retrying"},
		{syscall.ENFILE, "", "out of file descriptors; retrying"},
		{&fs.PathError{Op: "open", Path: "/h/logs/x.log", Err: syscall.EMFILE}, "", "out of file descriptors opening /h/logs/x.log; retrying"},
		{syscall.EACCES, "x", ""},
	} {
		if got := Reason(tc.err, tc.what); got != tc.want {
			t.Errorf("Reason(%v, %q) = %q, want %q", tc.err, tc.what, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		if got := Backoff(n); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", n, got, want)
		}
	}
	if Backoff(-1) != FirstBackoff || Backoff(1000) != MaxBackoff {
		t.Errorf("bounds: %v %v", Backoff(-1), Backoff(1000))
	}
}
