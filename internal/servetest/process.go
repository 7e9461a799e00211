package servetest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/syncbuf"
)

// Process is a ralph process a test started (`ralph serve`, `ralph
// worker`). It is stopped when the test ends, whatever the test did.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd.Wait returned
	err    error         // cmd.Wait's, once exited
	from   int           // the log's length when it started
	log    *syncbuf.Buffer
}

// Start runs `ralph ARGS…` with exactly env, its output going to log.
func Start(t testing.TB, log *syncbuf.Buffer, ralph string, env []string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(ralph, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, log, log
	p := &Process{cmd: cmd, exited: make(chan struct{}), from: len(log.String()), log: log}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// One goroutine waits, so that the readiness wait, Kill and Stop can
	// all see the exit without a second Wait.
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.end)
	return p
}

// Serve is Start of `ralph serve ARGS…`, back once the daemon says it
// listens: its line comes after the listener is open, and a daemon that
// exits instead fails the test at once, with what it said.
func Serve(t testing.TB, log *syncbuf.Buffer, ralph string, env []string, args ...string) *Process {
	t.Helper()
	p := Start(t, log, ralph, env, append([]string{"serve"}, args...)...)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(p.Output(), "ralph serve: listening on "); {
		select {
		case <-p.exited:
			t.Fatalf("ralph serve %v exited before it listened (%v):\n%s", args, p.err, p.Output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("ralph serve %v did not listen within 30s:\n%s", args, p.Output())
		}
	}
	return p
}

// Output is what the process wrote to its log.
func (p *Process) Output() string { return p.log.String()[p.from:] }

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Running reports whether it has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Kill ends it with SIGKILL, as a crash would, and waits for it.
func (p *Process) Kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// Stop asks it to end with SIGTERM and returns how it exited; one that
// does not within a minute is killed and the error says so.
func (p *Process) Stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(time.Minute):
		p.Kill()
		return errors.New("it did not stop within a minute of SIGTERM; killed")
	}
}

// end is the test's last word: a graceful stop, so that the daemon ends
// its agents' process groups itself, then SIGKILL if it hangs.
func (p *Process) end() {
	if !p.Running() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.Kill()
	}
}

// FreeAddr is a 127.0.0.1 address no one listens on, for a daemon to take.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// CPUTime is the process's own user and system CPU, without its
// children's; 0 where /proc cannot tell (not Linux, or it has gone).
func CPUTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	// Fields after the command's closing parenthesis: state is 0, utime
	// 11, stime 12, in clock ticks (100 a second on Linux).
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	sy, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+sy) * 10 * time.Millisecond
}

// RSS is the process's resident memory in bytes; 0 where /proc cannot
// tell.
func RSS(pid int) int64 { return procStatus(pid, "VmRSS:") }

// PeakRSS is the most resident memory the process has had (VmHWM) in
// bytes; 0 where /proc cannot tell.
func PeakRSS(pid int) int64 { return procStatus(pid, "VmHWM:") }

func procStatus(pid int, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
