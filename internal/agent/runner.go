package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"ralph/internal/reap"
	"ralph/internal/redact"
	"ralph/internal/store"
)

// Defaults of Runner.
const (
	DefaultGrace       = 2 * time.Second
	DefaultReapTimeout = 5 * time.Second
)

// ProcessRunner runs one agent process. *Runner is the real one; adapters
// hold the interface so a test can record or fake what would be run.
type ProcessRunner interface {
	Run(ctx context.Context, p Process) (ProcessResult, error)
}

// Process is one agent command to run.
type Process struct {
	// Argv is executed directly, never through a shell.
	Argv []string
	Dir  string
	// Env holds extra KEY=value entries on top of ralph's environment; later
	// entries win.
	Env []string
	// Share are files outside Dir the process works on (Invocation.Share),
	// handed to Wrap.
	Share []string
	// StdoutPath and StderrPath receive the two streams separately
	// (truncated first; the parent directory is created).
	StdoutPath, StderrPath string
	// Timeout kills the process group when it expires; 0 means none.
	Timeout time.Duration
	// OnLine, when set, also receives stdout line by line (without the line
	// end) while the process runs. It is called from one goroutine, never
	// after Run returns, and owns the slice. Lines are dropped rather than
	// stall the agent when the callback falls behind (a terminal paused
	// with Ctrl-S must not freeze the agent); the file always gets all.
	OnLine func(line []byte)
	// Stdin, when set, is copied to the process's standard input, which is
	// closed at its end; nil keeps /dev/null. It is read to EOF on a
	// separate goroutine, so it must not block indefinitely. A process that
	// exits without reading it all is fine.
	Stdin io.Reader
	// OnStderrLine is OnLine for stderr, under the same rules. It is there
	// for watchers: an agent may sit in a state it will not leave by itself
	// (OpenCode waiting out a provider limit in silence) that only its log
	// on stderr reveals.
	OnStderrLine func(line []byte)
	// OnStart, when set, receives the process group id once the process
	// runs, so a host can record it and end the group after its own crash.
	OnStart func(pgid int)
	// Abort stops the process group early when a reason arrives (a closed
	// channel counts, with a generic reason): SIGTERM, then SIGKILL after
	// the grace period, as on a timeout. ProcessResult.Aborted keeps the
	// reason. Nothing reads it once the process has ended, so a sender must
	// not block: a channel buffered for one and a send with a default.
	Abort <-chan string
	// Gate, when set, is opened on the call directory before the process
	// starts and closed after it ended; the time it spends waiting for a
	// person does not count against Timeout.
	Gate Gate
	// CallFiles, when set, writes what the agent's CLI reads from the call
	// directory (its configuration for this call alone, which the sandbox
	// binds with the directory) after the gate is open; env goes to the
	// agent.
	CallFiles func(callDir string) (env []string, err error)
}

// ProcessResult is how a process ended.
type ProcessResult struct {
	// ExitCode is the exit status, 128+N when killed by signal N, -1 when
	// the process never ran.
	ExitCode    int
	TimedOut    bool
	Interrupted bool
	// Aborted is the reason received on Process.Abort when that stopped the
	// process; "" otherwise. An aborted process is neither timed out nor
	// interrupted: the caller asked for the stop and knows what it means.
	Aborted  string
	Duration time.Duration
	// StartErr is an *StartError when the executable could not be started.
	StartErr error
	// OutputErr is the first error writing the output logs through the
	// live tee (a full disk): the logs then miss part of what the agent
	// said. Without the tee the agent writes them itself and ralph never
	// hears of such an error.
	OutputErr error
	Warnings  []string
}

// Runner starts agent processes in their own process group, with stdin
// from /dev/null unless Process.Stdin says otherwise, and makes sure
// nothing of the group outlives the call.
//
// Stopping (context cancelled, timeout, or processes left behind after the
// agent exited) sends SIGTERM to the whole group, waits up to Grace for the
// group to be gone, then sends SIGKILL and waits up to ReapTimeout more.
// A process that moves itself into another group or session (setsid,
// daemonising) escapes; catching those needs cgroups.
//
// The zero value is ready to use.
type Runner struct {
	// Grace is the time between SIGTERM and SIGKILL (DefaultGrace when 0).
	Grace time.Duration
	// ReapTimeout bounds the wait for the group to vanish after SIGKILL
	// (DefaultReapTimeout when 0).
	ReapTimeout time.Duration
	// Wrap, when set, turns the argv into the one that runs it confined
	// (package sandbox), given the directory and the final environment.
	// The wrapper leads the process group, so stopping works unchanged.
	// share are the files outside dir it works on (Process.Share).
	Wrap func(argv []string, dir string, env []string, share ...string) ([]string, error)
}

func (r *Runner) grace() time.Duration {
	if r == nil || r.Grace <= 0 {
		return DefaultGrace
	}
	return r.Grace
}

func (r *Runner) reapTimeout() time.Duration {
	if r == nil || r.ReapTimeout <= 0 {
		return DefaultReapTimeout
	}
	return r.ReapTimeout
}

// Run runs p to completion. A non-zero exit, a timeout or an interrupt is
// reported in ProcessResult; err is non-nil when the process could not be
// run at all (then, for a start failure, err is ProcessResult.StartErr).
func (r *Runner) Run(ctx context.Context, p Process) (ProcessResult, error) {
	res := ProcessResult{ExitCode: -1}
	if len(p.Argv) == 0 || p.Argv[0] == "" {
		return res, errors.New("agent: empty command")
	}
	if p.StdoutPath == "" || p.StderrPath == "" {
		return res, errors.New("agent: stdout and stderr log paths are required")
	}
	if ctx.Err() != nil {
		res.Interrupted = true
		return res, nil
	}
	stdout, err := createLog(p.StdoutPath)
	if err != nil {
		return res, err
	}
	defer stdout.Close()
	stderr := &lazyLog{path: p.StderrPath}
	defer stderr.Close()

	env, tmp, err := environ(p.Env)
	if err != nil {
		return res, err
	}
	// The agent may print any secret it is given (its API key, a service
	// token): each is masked by value in all ralph keeps of the call.
	redact.AddEnviron(env)
	if tmp != nil {
		// Emptied or removed when Run returns, after the whole group is gone.
		defer tmp.done()
	}
	// A directory a gate served in is never handed to another call.
	cd, err := takeDir(tmpPattern()+"call-", p.Gate == nil)
	if err != nil {
		return res, fmt.Errorf("agent: call directory: %w", err)
	}
	defer cd.done()
	call := cd.path
	env = append(env, CallDirEnv+"="+call)
	if p.Dir != "" {
		// The inherited PWD would name ralph's own directory: OpenCode
		// takes its project from PWD, not from the directory it runs in.
		if abs, err := filepath.Abs(p.Dir); err == nil {
			env = append(env, "PWD="+abs)
		}
	}
	if p.Gate != nil {
		genv, stop, err := p.Gate.Open(call)
		if err != nil {
			return res, fmt.Errorf("agent: %w", err)
		}
		defer stop()
		env = append(env, genv...)
	}
	if p.CallFiles != nil {
		fenv, err := p.CallFiles(call)
		if err != nil {
			return res, fmt.Errorf("agent: call directory: %w", err)
		}
		env = append(env, fenv...)
	}

	argv := p.Argv
	if r != nil && r.Wrap != nil {
		if argv, err = r.Wrap(argv, p.Dir, env, p.Share...); err != nil {
			return res, err
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = env
	cmd.Stdin = nil // os/exec connects /dev/null: agent CLIs wait on a non-terminal stdin
	var in *stdinFeed
	if p.Stdin != nil {
		if in, err = newStdinFeed(p.Stdin); err != nil {
			return res, err
		}
		defer in.abort()
		cmd.Stdin = in.r
	}
	cmd.SysProcAttr = sysProcAttr()
	pidfd := reap.AskPidfd(cmd.SysProcAttr)
	var outTee, errTee *lineTee
	var outW, errW *os.File
	if cmd.Stdout, outW, outTee, err = teeTo(stdout, p.OnLine); err != nil {
		return res, err
	}
	if outW != nil {
		defer outTee.r.Close()
	}
	if cmd.Stderr, errW, errTee, err = teeTo(stderr, p.OnStderrLine); err != nil {
		if outW != nil {
			outW.Close()
		}
		return res, err
	}
	if errW != nil {
		defer errTee.r.Close()
	}
	// The child holds its own copies of the pipes' write ends; ours must go
	// or the readers never see EOF.
	closeWriters := func() {
		for _, w := range []*os.File{outW, errW} {
			if w != nil {
				w.Close()
			}
		}
	}

	start := time.Now()
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Started on the spawner's thread (spawn.go): Pdeathsig then
		// comes only when ralph dies.
		err := startPinned(cmd)
		started <- err
		if err == nil {
			// On the poller, not a thread blocked in waitid (package reap).
			reap.AwaitExit(*pidfd)
			_ = cmd.Wait() // the status is read from cmd.ProcessState
		} else if *pidfd >= 0 {
			syscall.Close(*pidfd)
		}
		close(done)
	}()
	err = <-started
	closeWriters()
	if err != nil {
		res.StartErr = &StartError{Command: p.Argv[0], Err: err}
		return res, res.StartErr
	}
	for _, t := range []*lineTee{outTee, errTee} {
		if t != nil {
			t.start()
		}
	}
	if in != nil {
		in.start()
	}
	pgid := cmd.Process.Pid // Setpgid: the leader's pid is the group id
	trackGroup(pgid)
	defer untrackGroup(pgid) // after clearGroup: the group is gone by then
	if p.OnStart != nil {
		p.OnStart(pgid)
	}

	var timeout <-chan time.Time
	var timer *time.Timer
	if p.Timeout > 0 {
		timer = time.NewTimer(p.Timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	var termAt time.Time
wait:
	select {
	case <-done:
	case <-ctx.Done():
		res.Interrupted = true
	case <-timeout:
		if left := callTimeLeft(p.Timeout, time.Since(start), p.Gate); left > 0 {
			timer.Reset(left) // a person's time is not the agent's
			goto wait
		}
		res.TimedOut = true
	case reason, ok := <-p.Abort:
		res.Aborted = reason
		if !ok || reason == "" {
			res.Aborted = "aborted by a watcher"
		}
	}
	select {
	case <-done:
		// It finished by itself as the stop came: nothing was killed.
		res.Interrupted, res.TimedOut, res.Aborted = false, false, ""
	default:
	}
	if res.Interrupted || res.TimedOut || res.Aborted != "" {
		signalGroup(pgid, syscall.SIGTERM)
		termAt = time.Now()
		grace := time.NewTimer(r.grace())
		select {
		case <-done:
		case <-grace.C:
			signalGroup(pgid, syscall.SIGKILL)
			<-done
		}
		grace.Stop()
	}
	res.Duration = time.Since(start)
	res.ExitCode = exitCode(cmd.ProcessState)

	res.Warnings = append(res.Warnings, r.clearGroup(pgid, termAt)...)
	if outTee != nil {
		res.Warnings = append(res.Warnings, outTee.wait(r.reapTimeout())...)
		res.OutputErr = outTee.writeErr
	}
	if errTee != nil {
		for _, w := range errTee.wait(r.reapTimeout()) {
			res.Warnings = append(res.Warnings, "stderr: "+w)
		}
		if res.OutputErr == nil {
			res.OutputErr = errTee.writeErr
		}
	}
	if in != nil {
		res.Warnings = append(res.Warnings, in.wait(r.reapTimeout())...)
	}
	return res, nil
}

// callTimeLeft is what is left of a call's time limit after elapsed, not
// counting the time its gate spent waiting for a person (a wait still
// under way counts as long as it lasts: the timer comes back).
func callTimeLeft(limit, elapsed time.Duration, g Gate) time.Duration {
	if g == nil {
		return 0
	}
	left := limit - (elapsed - g.Waited())
	if left <= 0 {
		return 0
	}
	// A wait under way grows Waited: look again no later than a minute on.
	return max(min(left, time.Minute), 10*time.Millisecond)
}

// teeTo is what the child writes a stream to: a pipe whose reader masks
// the known secrets and copies the rest into the log file, handing onLine
// the lines as they come when it is set (w is the write end, to close once
// the child has it). Never the file itself: what the agent prints is
// stored only masked.
func teeTo(file io.Writer, onLine func([]byte)) (dst io.Writer, w *os.File, tee *lineTee, err error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("agent: pipe: %w", err)
	}
	return pw, pw, newLineTee(pr, file, onLine), nil
}

// clearGroup makes sure no process of the group survives its leader, which
// has already been reaped. termAt is when SIGTERM went out, zero if never.
func (r *Runner) clearGroup(pgid int, termAt time.Time) []string {
	if !groupAlive(pgid) {
		return nil
	}
	var warnings []string
	if termAt.IsZero() {
		// The agent exited on its own but left processes behind (a dev
		// server, `sleep 1000 &`); they must not outlive the iteration.
		warnings = append(warnings, "the agent left background processes running; ralph stopped them")
		signalGroup(pgid, syscall.SIGTERM)
		termAt = time.Now()
	}
	if waitGroupGone(pgid, termAt.Add(r.grace())) {
		return warnings
	}
	signalGroup(pgid, syscall.SIGKILL)
	if waitGroupGone(pgid, time.Now().Add(r.reapTimeout())) {
		return warnings
	}
	return append(warnings, fmt.Sprintf("processes of the agent's process group %d still exist %v after SIGKILL", pgid, r.reapTimeout()))
}

// waitGroupGone polls until the group has no live process or the deadline
// passes. Polling is the only portable way: there is no wait for processes
// that are not our children.
func waitGroupGone(pgid int, deadline time.Time) bool {
	delay := time.Millisecond
	for {
		if !groupAlive(pgid) {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(delay)
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// signalGroup signals every process of the group; ESRCH (already gone) is
// fine.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// lazyLog is a log file made at its first write. Most agent calls print
// nothing on stderr, and making a file (an inode, and in time freeing it)
// was a fair share of a call's own cost to ralph: a call that printed
// nothing there leaves no stderr log, which readers take as empty.
type lazyLog struct {
	path string
	f    *os.File
	err  error
}

func (l *lazyLog) Write(b []byte) (int, error) {
	if l.f == nil && l.err == nil {
		l.f, l.err = createLog(l.path)
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.f.Write(b)
}

func (l *lazyLog) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

func createLog(path string) (*os.File, error) {
	// The logs directory may be a link planted by the repository (or by a
	// sandboxed agent); store.OpenFile never writes through one.
	f, err := store.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("agent: log file: %w", err)
	}
	return f, nil
}
