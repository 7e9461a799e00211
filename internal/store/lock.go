package store

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
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
	// Holder is who holds it, as it said (AcquireLockAs): a daemon with its
	// RALPH_HOME and the session looping; "" for a `ralph run`, which
	// writes its pid alone.
	Holder string
}

func (e *LockedError) Error() string {
	if strings.HasPrefix(e.Holder, DaemonHolder) {
		return fmt.Sprintf("this project is in use by %s (lock %s); "+
			"stop that task there (ralph task stop) or wait for its loop to end", e.Holder, e.Path)
	}
	who := "pid unknown"
	if e.PID > 0 {
		who = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("another ralph is already running in this project (%s, lock %s); "+
		"stop it or wait for it to finish", who, e.Path)
}

// DaemonHolder begins the name a daemon's session gives itself in a
// project's lock.
const DaemonHolder = "ralph serve"

// AcquireLock takes the lock file at path without waiting, creating it and
// its directory if needed, and writes the current pid into it. If a live
// process holds it, the error is a *LockedError naming that process. A lock
// left by a dead process is taken over (see Lock.StalePID).
//
// On Linux, macOS and the BSDs the lock is an flock on the file, which the
// kernel drops when the holder dies however it dies, so a stale lock can
// never block. Elsewhere it falls back to an exclusively created file whose
// pid is checked for liveness.
func AcquireLock(path string) (*Lock, error) { return AcquireLockAs(path, "") }

// AcquireLockAs is AcquireLock that names the holder in the lock file, on
// the line after the pid, so the one refused can say who holds the
// project: a daemon's session (DaemonHolder followed by its RALPH_HOME,
// pid and session). `ralph run` names nothing: its lock file stays the
// bare pid that scripts read (kill $(cat .ralph/ralph.lock)).
func AcquireLockAs(path, holder string) (*Lock, error) {
	holder = strings.Join(strings.Fields(holder), " ") // one line
	l, err := acquire(path, holder)
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

// readHolder reads who the holder said it is, the line after its pid. Any
// process in the tree can hold the lock and write that line, and it is
// shown in messages and the daemon's API: control characters go, and it is
// cut at maxHolder bytes.
func readHolder(f *os.File) string {
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	_, rest, _ := bytes.Cut(buf[:n], []byte{'\n'})
	line, _, _ := bytes.Cut(rest, []byte{'\n'})
	line = bytes.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, bytes.TrimSpace(line))
	if len(line) > maxHolder {
		line = append(line[:maxHolder:maxHolder], "…"...)
	}
	return strings.ToValidUTF8(string(line), "")
}

// maxHolder bounds the holder's name as read.
const maxHolder = 200

// holderOf reads the holder's pid and name, giving a holder that has just
// taken the lock a moment to write them, so the refusal can name it.
func holderOf(f *os.File, path string) *LockedError {
	for range 20 {
		if pid := readPID(f); pid > 0 {
			return &LockedError{Path: path, PID: pid, Holder: readHolder(f)}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return &LockedError{Path: path}
}

// writePID replaces the file's content with our pid and the holder's name
// (when given) and flushes it, so a second ralph can name us.
func writePID(f *os.File, holder string) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	data := strconv.Itoa(os.Getpid()) + "\n"
	if holder != "" {
		data += holder + "\n"
	}
	if _, err := f.WriteAt([]byte(data), 0); err != nil {
		return err
	}
	return f.Sync()
}
