package store

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Goroutines racing for the lock: exactly one wins, the others are told
// who holds it; after Release the next one gets it.
func TestLockContentionGoroutines(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".ralph", "ralph.lock")
	const n = 8
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		locks  []*Lock
		losers []*LockedError
	)
	for range n {
		wg.Go(func() {
			l, err := AcquireLock(p)
			mu.Lock()
			defer mu.Unlock()
			var le *LockedError
			switch {
			case err == nil:
				locks = append(locks, l)
			case errors.As(err, &le):
				losers = append(losers, le)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(locks) != 1 || len(losers) != n-1 {
		t.Fatalf("%d winners, %d losers", len(locks), len(losers))
	}
	for _, le := range losers {
		if le.PID != os.Getpid() || !strings.Contains(le.Error(), "pid "+strconv.Itoa(os.Getpid())) {
			t.Errorf("loser told %v", le)
		}
	}
	if b, _ := os.ReadFile(p); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q", b)
	}
	if err := locks[0].Release(); err != nil {
		t.Fatal(err)
	}
	if err := locks[0].Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	l, err := AcquireLock(p)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if l.StalePID != 0 {
		t.Errorf("clean release reported as stale pid %d", l.StalePID)
	}
	l.Release()
}

func TestLockStaleFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ralph.lock")
	dead := deadPID(t)
	writeFile(t, p, strconv.Itoa(dead)+"\n")
	l, err := AcquireLock(p)
	if err != nil {
		t.Fatalf("stale lock not taken over: %v", err)
	}
	defer l.Release()
	if l.StalePID != dead {
		t.Errorf("StalePID = %d, want %d", l.StalePID, dead)
	}
	if b, _ := os.ReadFile(p); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q", b)
	}
}

// Two processes: the second is refused with the holder's pid; once the
// holder releases, or dies without releasing, the lock can be taken.
func TestLockContentionProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	for _, kill := range []bool{false, true} {
		name := map[bool]string{false: "holder releases", true: "holder killed"}[kill]
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "ralph.lock")
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "STORE_HELPER_LOCK="+p)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
				t.Fatalf("helper said %q", line)
			}

			_, err := AcquireLock(p)
			var le *LockedError
			if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
				t.Fatalf("want LockedError naming pid %d, got %v", cmd.Process.Pid, err)
			}

			if kill {
				_ = cmd.Process.Kill()
			} else {
				_ = stdin.Close()
			}
			_ = cmd.Wait()
			l, err := AcquireLock(p)
			if err != nil {
				t.Fatalf("after the holder ended: %v", err)
			}
			defer l.Release()
			if want := map[bool]int{false: 0, true: cmd.Process.Pid}[kill]; l.StalePID != want {
				t.Errorf("StalePID = %d, want %d", l.StalePID, want)
			}
		})
	}
}

// lockHolder is the holding process of TestLockContentionProcesses: the
// test binary run again with STORE_HELPER_LOCK (see TestMain).
func lockHolder(p string) error {
	l, err := AcquireLock(p)
	if err != nil {
		return err
	}
	os.Stdout.WriteString("locked\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
	return l.Release()
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A holder that names itself is named to the one refused: a daemon's
// session, so `ralph run` can say which loop holds the project.
func TestLockNamesItsHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".ralph", "ralph.lock")
	who := DaemonHolder + " (RALPH_HOME /srv/ralph, pid 7), session web,\n task t3"
	l, err := AcquireLockAs(p, who)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = AcquireLock(p)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || le.Holder != DaemonHolder+" (RALPH_HOME /srv/ralph, pid 7), session web, task t3" {
		t.Fatalf("refused with %#v", err)
	}
	if msg := le.Error(); !strings.Contains(msg, "in use by ralph serve (RALPH_HOME /srv/ralph, pid 7), session web, task t3") || !strings.Contains(msg, p) {
		t.Errorf("message %q", msg)
	}
	b, _ := os.ReadFile(p)
	if first, _, _ := strings.Cut(string(b), "\n"); first != strconv.Itoa(os.Getpid()) {
		t.Errorf("the pid is not the first line, which older readers take: %q", b)
	}
}

// The holder's line is shown to people: what it may not carry is dropped.
func TestLockHolderIsCleaned(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ralph.lock")
	if err := os.WriteFile(p, []byte("7\nralph serve \x1b]0;pwned\x07 "+strings.Repeat("x", 300)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := readHolder(f)
	if strings.ContainsAny(got, "\x1b\x07") || len(got) > maxHolder+len("…") || !strings.HasPrefix(got, "ralph serve ]0;pwned ") {
		t.Errorf("holder %q", got)
	}
}
