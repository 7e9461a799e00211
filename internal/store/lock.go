package store

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Lock is the run lock of a project: while a `ralph run` holds it, a second
// one in the same project refuses to start instead of racing the first over
// the state files and the agent session.
type Lock struct {
	f    *os.File
	path string
	// StalePID is the pid found in a lock file that nobody held any more (its
	// process died without releasing it), 0 if there was none. The lock was
	// taken over; the caller may mention it.
	StalePID int
}

// LockedError is returned by AcquireLock when another live process holds
// the lock.
type LockedError struct {
	Path string
	PID  int // 0 when the holder has not written its pid yet
}

func (e *LockedError) Error() string {
	who := "pid unknown"
	if e.PID > 0 {
		who = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("another ralph is already running in this project (%s, lock %s); "+
		"stop it or wait for it to finish", who, e.Path)
}

// AcquireLock takes the lock file at path without waiting, creating it and
// its directory if needed, and writes the current pid into it. If a live
// process holds it, the error is a *LockedError naming that process. A lock
// left by a dead process is taken over (see Lock.StalePID).
//
// On Linux, macOS and the BSDs the lock is an flock on the file, which the
// kernel drops when the holder dies however it dies, so a stale lock can
// never block. Elsewhere it falls back to an exclusively created file whose
// pid is checked for liveness.
func AcquireLock(path string) (*Lock, error) {
	l, err := acquire(path)
	if err != nil {
		if _, ok := err.(*LockedError); ok {
			return nil, err
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return l, nil
}

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

// Release gives the lock up and removes the file. It is safe to call more
// than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := release(l)
	l.f = nil
	return err
}

// readPID reads the pid a holder wrote; 0 if there is none yet or it is
// not a number.
func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	line, _, _ := bytes.Cut(buf[:n], []byte{'\n'})
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil || pid < 0 {
		return 0
	}
	return pid
}

// holderPID reads the holder's pid, giving a holder that has just taken
// the lock a moment to write it, so the refusal can name it.
func holderPID(f *os.File) int {
	for range 20 {
		if pid := readPID(f); pid > 0 {
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0
}

// writePID replaces the file's content with our pid and flushes it, so a
// second ralph can name us.
func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return err
	}
	return f.Sync()
}
