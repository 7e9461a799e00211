package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
)

// fakeAgent is the scripted fake agent executable, built once in TestMain.
var fakeAgent string

func TestMain(m *testing.M) { os.Exit(script.Main(m, &fakeAgent)) }

// testRunner keeps kills short so the tests stay fast.
func testRunner() *Runner {
	return &Runner{Grace: 300 * time.Millisecond, ReapTimeout: 2 * time.Second}
}

// proc is a Process logging to a fresh directory.
func proc(t *testing.T, argv ...string) Process {
	dir := t.TempDir()
	return Process{
		Argv: argv, Dir: dir,
		StdoutPath: filepath.Join(dir, "logs", "out.log"), StderrPath: filepath.Join(dir, "logs", "err.log"),
	}
}

// fakeProc runs the fake agent with one scripted iteration.
func fakeProc(t *testing.T, it script.Iteration) Process {
	p := proc(t, fakeAgent)
	path := filepath.Join(t.TempDir(), "script.json")
	if err := (script.Script{Iterations: []script.Iteration{it}}).Write(path); err != nil {
		t.Fatal(err)
	}
	p.Env = []string{script.EnvScript + "=" + path}
	return p
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// killPID cleans up after a failing test.
func killPID(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}

// pidTree is a fake agent and its grandchild, by the pids they wrote to
// agent.pid and grandchild.pid.
type pidTree struct{ agent, grandchild int }

// readPIDTree reads the pids in dir; both processes are killed when the
// test ends, in case it fails with them still running.
func readPIDTree(t *testing.T, dir string) pidTree {
	t.Helper()
	tr := pidTree{readPID(t, filepath.Join(dir, "agent.pid")), readPID(t, filepath.Join(dir, "grandchild.pid"))}
	killPID(t, tr.agent)
	killPID(t, tr.grandchild)
	return tr
}

// checkGone fails the test if either process still runs.
func (tr pidTree) checkGone(t *testing.T) {
	t.Helper()
	if running(tr.agent) || running(tr.grandchild) {
		t.Errorf("still running: agent %v, grandchild %v", running(tr.agent), running(tr.grandchild))
	}
}

func TestRunExitCodeAndStreams(t *testing.T) {
	tests := []struct {
		name, script, stdout, stderr string
		code                         int
	}{
		{"ok", "echo out; echo err >&2", "out\n", "err\n", 0},
		{"exit 3", "echo partial; exit 3", "partial\n", "", 3},
		{"killed by signal", "kill -KILL $$", "", "", 128 + 9},
		{"stdin is /dev/null", "cat; echo eof", "eof\n", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := proc(t, "/bin/sh", "-c", tt.script)
			p.Timeout = 10 * time.Second
			res, err := testRunner().Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.code || res.TimedOut || res.Interrupted || res.StartErr != nil {
				t.Errorf("result = %+v, want exit %d", res, tt.code)
			}
			if got := readFile(t, p.StdoutPath); got != tt.stdout {
				t.Errorf("stdout = %q, want %q", got, tt.stdout)
			}
			// Nothing on stderr: no file made (lazyLog).
			b, err := os.ReadFile(p.StderrPath)
			if tt.stderr == "" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("stderr log made for nothing: %q, %v", b, err)
			}
			if tt.stderr != "" && string(b) != tt.stderr {
				t.Errorf("stderr = %q (%v), want %q", b, err, tt.stderr)
			}
		})
	}
}

func TestRunEnvironment(t *testing.T) {
	t.Setenv("RALPH_TEST_PARENT", "inherited")
	p := proc(t, "/bin/sh", "-c", `echo "$RALPH_TEST_PARENT $RALPH_TEST_EXTRA $RALPH_TEST_OVERRIDE"; echo "$TMPDIR"; [ -d "$TMPDIR" ] && echo tmp-exists; pwd`)
	t.Setenv("RALPH_TEST_OVERRIDE", "parent")
	p.Env = []string{"RALPH_TEST_EXTRA=extra", "RALPH_TEST_OVERRIDE=child"}
	if _, err := testRunner().Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, p.StdoutPath)), "\n")
	if len(lines) != 4 || lines[0] != "inherited extra child" || lines[2] != "tmp-exists" {
		t.Fatalf("output %q", lines)
	}
	if !strings.Contains(filepath.Base(lines[1]), "ralph-agent-") {
		t.Errorf("TMPDIR = %q, want a per-run directory", lines[1])
	}
	if _, err := os.Stat(lines[1]); !os.IsNotExist(err) {
		t.Errorf("per-run TMPDIR %s not removed: %v", lines[1], err)
	}
	if real, _ := filepath.EvalSymlinks(p.Dir); lines[3] != p.Dir && lines[3] != real {
		t.Errorf("working directory %q, want %q", lines[3], p.Dir)
	}

	// A TMPDIR given by the caller is used as is.
	own := t.TempDir()
	p = proc(t, "/bin/sh", "-c", `echo "$TMPDIR"`)
	p.Env = []string{"TMPDIR=" + own}
	if _, err := testRunner().Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(readFile(t, p.StdoutPath)); got != own {
		t.Errorf("TMPDIR = %q, want %q", got, own)
	}
}

func TestRunStartErrors(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		dir  string
	}{
		{"not found", []string{"ralph-no-such-agent-xyz", "-p", "hi"}, ""},
		{"missing path", []string{"/nonexistent/bin/claude"}, ""},
		{"not executable", []string{"/etc/hostname"}, ""},
		{"missing dir", []string{"/bin/sh", "-c", "true"}, "/nonexistent/project"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := proc(t, tt.argv...)
			if tt.dir != "" {
				p.Dir = tt.dir
			}
			res, err := testRunner().Run(context.Background(), p)
			var se *StartError
			if !errors.As(err, &se) || res.StartErr != err {
				t.Fatalf("err = %v, StartErr = %v; want the same *StartError", err, res.StartErr)
			}
			if se.Command != tt.argv[0] || !strings.Contains(err.Error(), strconv.Quote(tt.argv[0])) {
				t.Errorf("message %q does not name the command %q", err, tt.argv[0])
			}
			if res.ExitCode != -1 {
				t.Errorf("exit code %d, want -1", res.ExitCode)
			}
		})
	}
}

func TestRunInvalid(t *testing.T) {
	r := testRunner()
	if _, err := r.Run(context.Background(), Process{StdoutPath: "a", StderrPath: "b"}); err == nil {
		t.Error("empty argv accepted")
	}
	if _, err := r.Run(context.Background(), Process{Argv: []string{"true"}}); err == nil {
		t.Error("missing log paths accepted")
	}
}

// TestRunTimeoutKillsGroup runs a real process tree: the fake agent starts
// a background grandchild and hangs; the timeout must take both down.
func TestRunTimeoutKillsGroup(t *testing.T) {
	p := fakeProc(t, script.Iteration{
		Stdout: "working\n", Sleep: script.Duration(time.Hour),
		PIDFile: "agent.pid", SpawnGrandchild: true, GrandchildPIDFile: "grandchild.pid",
	})
	p.Timeout = time.Second // long enough for the tree to be up under -race
	start := time.Now()
	res, err := testRunner().Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	tree := readPIDTree(t, p.Dir)
	if !res.TimedOut || res.Interrupted || res.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("result = %+v, want timed out by SIGTERM", res)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v", elapsed)
	}
	tree.checkGone(t)
	if got := readFile(t, p.StdoutPath); got != "working\n" {
		t.Errorf("stdout = %q", got)
	}
}

// TestRunSIGKILLAfterGrace: an agent and grandchild that ignore SIGTERM
// are killed with SIGKILL once the grace period is over.
func TestRunSIGKILLAfterGrace(t *testing.T) {
	p := fakeProc(t, script.Iteration{
		Sleep: script.Duration(time.Hour), IgnoreSIGTERM: true, PIDFile: "agent.pid",
		SpawnGrandchild: true, GrandchildIgnoresSIGTERM: true, GrandchildPIDFile: "grandchild.pid",
	})
	p.Timeout = time.Second
	r := testRunner()
	start := time.Now()
	res, err := r.Run(context.Background(), p)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	tree := readPIDTree(t, p.Dir)
	if !res.TimedOut || res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("result = %+v, want timed out, killed by SIGKILL", res)
	}
	if elapsed < p.Timeout+r.Grace {
		t.Errorf("returned after %v, before timeout+grace %v", elapsed, p.Timeout+r.Grace)
	}
	tree.checkGone(t)
}

func TestRunContextCancel(t *testing.T) {
	p := fakeProc(t, script.Iteration{Sleep: script.Duration(time.Hour), SpawnGrandchild: true, GrandchildPIDFile: "grandchild.pid"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the process tree is up.
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(p.Dir, "grandchild.pid")); err == nil {
				cancel()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := testRunner().Run(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	gcPID := readPID(t, filepath.Join(p.Dir, "grandchild.pid"))
	killPID(t, gcPID)
	if !res.Interrupted || res.TimedOut || res.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("result = %+v, want interrupted", res)
	}
	if running(gcPID) {
		t.Error("grandchild still running")
	}

	// Already cancelled: nothing starts.
	res, err = testRunner().Run(ctx, proc(t, "/bin/sh", "-c", "exit 0"))
	if err != nil || !res.Interrupted || res.ExitCode != -1 {
		t.Errorf("pre-cancelled run = %+v, %v", res, err)
	}
}

// TestRunCleansUpAfterNormalExit: the agent exits 0 but leaves a background
// process behind; it must not outlive the call.
func TestRunCleansUpAfterNormalExit(t *testing.T) {
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprintf("live=%v", live), func(t *testing.T) {
			p := fakeProc(t, script.Iteration{Stdout: "done\n", SpawnGrandchild: true, GrandchildPIDFile: "grandchild.pid"})
			var lines []string
			if live {
				// The grandchild holds the stdout pipe: reading must still end.
				p.OnLine = func(l []byte) { lines = append(lines, string(l)) }
			}
			res, err := testRunner().Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			gcPID := readPID(t, filepath.Join(p.Dir, "grandchild.pid"))
			killPID(t, gcPID)
			if res.ExitCode != 0 || res.TimedOut || res.Interrupted {
				t.Errorf("result = %+v", res)
			}
			if running(gcPID) {
				t.Error("grandchild still running")
			}
			if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "background processes") {
				t.Errorf("warnings = %q", res.Warnings)
			}
			if live && (len(lines) != 1 || lines[0] != "done") {
				t.Errorf("lines = %q", lines)
			}
		})
	}
}

func TestRunLiveLines(t *testing.T) {
	p := fakeProc(t, script.Iteration{
		Stdout: "one\r\ntwo\n\nthree without newline", LineDelay: script.Duration(20 * time.Millisecond),
		Stderr: "noise\n",
	})
	var mu sync.Mutex
	var lines []string
	p.OnLine = func(l []byte) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, string(l))
	}
	res, err := testRunner().Run(context.Background(), p)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"one", "two", "", "three without newline"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", lines, want)
	}
	if got := readFile(t, p.StdoutPath); got != "one\r\ntwo\n\nthree without newline" {
		t.Errorf("stdout file = %q", got)
	}
	if got := readFile(t, p.StderrPath); got != "noise\n" {
		t.Errorf("stderr file = %q", got)
	}
}

// A secret of the agent's environment that it prints, split across two
// writes with a pause between (two reads of the pipe), is masked whole in
// both logs and in the live lines, with and without a live view; the rest
// of the output is kept byte for byte.
func TestRunMasksTheAgentsSecrets(t *testing.T) {
	const secret = "halfone-halftwo-7788"
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprintf("live=%v", live), func(t *testing.T) {
			p := proc(t, "/bin/sh", "-c", `printf '{"text":"key halfone-'; sleep 0.3; printf 'halftwo-7788 ok"}\n'; `+
				`printf 'err %s\n' "$ACME_SERVICE_TOKEN" >&2`)
			p.Env = []string{"ACME_SERVICE_TOKEN=" + secret}
			var mu sync.Mutex
			var lines []string
			if live {
				p.OnLine = func(l []byte) {
					mu.Lock()
					defer mu.Unlock()
					lines = append(lines, string(l))
				}
			}
			if res, err := testRunner().Run(context.Background(), p); err != nil || res.ExitCode != 0 {
				t.Fatalf("%+v, %v", res, err)
			}
			if got := readFile(t, p.StdoutPath); got != `{"text":"key [redacted] ok"}`+"\n" {
				t.Errorf("stdout log = %q", got)
			}
			if got := readFile(t, p.StderrPath); got != "err [redacted]\n" {
				t.Errorf("stderr log = %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if live && (len(lines) != 1 || lines[0] != `{"text":"key [redacted] ok"}`) {
				t.Errorf("live lines = %q", lines)
			}
		})
	}
}

// Each call gets its own channel directory (RALPH_CALL_DIR), readable by
// ralph's user alone and gone when the call ends, even when the caller
// chose the TMPDIR.
func TestRunCallDirectory(t *testing.T) {
	var dirs []string
	for _, env := range [][]string{nil, {"TMPDIR=" + t.TempDir()}} {
		p := proc(t, "/bin/sh", "-c", `echo "$`+CallDirEnv+`"; stat -c %a "$`+CallDirEnv+`"`)
		p.Env = env
		if _, err := testRunner().Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(readFile(t, p.StdoutPath)), "\n")
		if len(lines) != 2 || lines[0] == "" || lines[1] != "700" {
			t.Fatalf("call directory and mode: %q", lines)
		}
		if _, err := os.Stat(lines[0]); !os.IsNotExist(err) {
			t.Errorf("call directory %s not removed: %v", lines[0], err)
		}
		dirs = append(dirs, lines[0])
	}
	if dirs[0] == dirs[1] {
		t.Errorf("two calls shared the directory %s", dirs[0])
	}
}

// PWD names the agent's directory, not ralph's: OpenCode takes its
// project from it (checked with 1.18.33), and ralph serve runs each task
// somewhere else than its own directory.
func TestRunPWD(t *testing.T) {
	p := proc(t, "printenv", "PWD")
	if _, err := testRunner().Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(readFile(t, p.StdoutPath)); got != p.Dir {
		t.Errorf("PWD = %q, want %q", got, p.Dir)
	}
}

// A call's CLI configuration is written into its call directory before
// the process starts, and the variables that point at it reach the agent.
func TestRunCallFiles(t *testing.T) {
	p := proc(t, "/bin/sh", "-c", `cat "$RALPH_TEST_CONFIG"; echo; dirname "$RALPH_TEST_CONFIG"; echo "$`+CallDirEnv+`"`)
	p.CallFiles = func(dir string) ([]string, error) {
		path := filepath.Join(dir, "config.json")
		return []string{"RALPH_TEST_CONFIG=" + path}, os.WriteFile(path, []byte(`{"x":1}`), 0o600)
	}
	if _, err := testRunner().Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, p.StdoutPath)), "\n")
	if len(lines) != 3 || lines[0] != `{"x":1}` || lines[1] != lines[2] {
		t.Fatalf("output %q", lines)
	}
	p = proc(t, "/bin/true")
	p.CallFiles = func(string) ([]string, error) { return nil, errors.New("no room") }
	if _, err := testRunner().Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "no room") {
		t.Errorf("err %v", err)
	}
}

type waitedGate time.Duration

func (waitedGate) Open(string) ([]string, func(), error) { return nil, func() {}, nil }
func (w waitedGate) Waited() time.Duration               { return time.Duration(w) }

func TestCallTimeLeft(t *testing.T) {
	for _, c := range []struct {
		name           string
		limit, elapsed time.Duration
		gate           Gate
		want           time.Duration
	}{
		{"no gate: the limit is the limit", time.Minute, time.Minute, nil, 0},
		{"no waiting: timed out", time.Minute, time.Minute, waitedGate(0), 0},
		{"a person's time is added", time.Minute, time.Minute, waitedGate(20 * time.Second), 20 * time.Second},
		{"looked at again within a minute", time.Hour, time.Hour, waitedGate(50 * time.Minute), time.Minute},
		{"all used even with waiting", time.Minute, 3 * time.Minute, waitedGate(time.Minute), 0},
	} {
		if got := callTimeLeft(c.limit, c.elapsed, c.gate); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
