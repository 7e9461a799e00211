package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"ralph/internal/servetest"
	"ralph/internal/store"
)

// The scripts in testdata/script run the real ralph command line: testscript
// re-executes this test binary as "ralph". `ralph run` calls the scripted
// fake agent executable (servetest.Fake), built once for all the tests.
func TestMain(m *testing.M) {
	testscript.Main(servetest.Tests(m), map[string]func(){
		"ralph": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

var updateReplay = flag.Bool("update-replay", false, "save each script's decisions to internal/loop/testdata/replay")

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(t, "testdata/script"))
}

// TestSandboxScripts are the scripts that run agents in a real
// bubblewrap sandbox: missing locally they skip, under CI=true they fail.
func TestSandboxScripts(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is not installed; .ci/run installs it (scripts/install-test-deps.sh)")
		}
		t.Skip("bwrap is not installed")
	}
	testscript.Run(t, scriptParams(t, "testdata/sandbox"))
}

func scriptParams(t *testing.T, dir string) testscript.Params {
	fake := servetest.Fake(t)
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("FAKEAGENT", fake)
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "t")
			env.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "t")
			env.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
			// Scripts pace nothing: no delays or backoffs unless they ask.
			env.Setenv("RALPH_DELAY", "0")
			env.Setenv("RALPH_FAILURE_BACKOFF", "0")
			// Every decision is traced, for the replay test of the loop.
			trace := filepath.Join(env.WorkDir, ".trace.jsonl")
			env.Setenv("RALPH_TRACE", trace)
			if *updateReplay {
				name := filepath.Base(env.WorkDir)
				env.Defer(func() { saveReplay(env.T(), trace, name) })
			}
			if *updateRecords {
				work, name := env.WorkDir, filepath.Base(env.WorkDir)
				env.Defer(func() { saveRecords(env.T(), work, name) })
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitstatus":  waitStatus,
			"initproject": initProject,
			"waitfile":    waitFile,
			"dead":        dead,
			"signal":      signalRalph,
		},
	}
}

// saveReplay keeps a script's trace as a recorded run for the loop's
// replay test.
func saveReplay(t testscript.T, trace, name string) {
	b, err := os.ReadFile(trace)
	if err != nil || len(b) == 0 {
		return // the script ran no loop
	}
	name = strings.TrimPrefix(name, "script-")
	if err := os.WriteFile(filepath.Join("..", "loop", "testdata", "replay", "script_"+name+".jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

var updateRecords = flag.Bool("update-records", false, "save each script's iteration records to internal/replay/testdata/corpus")

// saveRecords keeps the iteration records a script's projects wrote, with
// their replay inputs, as the corpus `ralph replay`'s test replays.
func saveRecords(t testscript.T, work, name string) {
	name = strings.TrimPrefix(name, "script-")
	_ = filepath.WalkDir(work, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "metrics.jsonl" || filepath.Base(filepath.Dir(path)) != "logs" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(b, []byte(`"replay":{`)) {
			return nil // no iteration, or none that kept its inputs
		}
		proj, _ := filepath.Rel(work, filepath.Dir(filepath.Dir(filepath.Dir(path))))
		file := "script_" + name
		if proj != "." {
			file += "_" + strings.NewReplacer("/", "_", ".", "").Replace(proj)
		}
		if err := os.WriteFile(filepath.Join("..", "replay", "testdata", "corpus", file+".jsonl"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return nil
	})
}

// initproject DIR PLANFILE: a git repository with .ralph/PROMPT.md,
// fix_plan.md (from PLANFILE) and AGENT.md, committed.
func initProject(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: initproject DIR PLANFILE")
	}
	dir := ts.MkAbs(args[0])
	plan, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	ts.Check(os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755))
	for name, content := range map[string]string{"PROMPT.md": "Work on fix_plan.md.\n", "fix_plan.md": string(plan), "AGENT.md": "Run: go test ./...\n"} {
		ts.Check(os.WriteFile(filepath.Join(dir, ".ralph", name), []byte(content), 0o644))
	}
	for _, a := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", a...)
		cmd.Dir = dir
		for _, k := range []string{"PATH", "HOME", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
			cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			ts.Fatalf("git %v: %v\n%s", a, err, out)
		}
	}
	fmt.Fprintf(ts.Stdout(), "project %s ready\n", args[0])
}

// waitstatus PROJECT STATUS: wait (up to 20 s) until the project's
// status.json says STATUS ("paused", "running", "stopped").
func waitStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitstatus PROJECT STATUS")
	}
	path := filepath.Join(ts.MkAbs(args[0]), ".ralph", "status.json")
	deadline := time.Now().Add(20 * time.Second)
	var last store.Status
	for time.Now().Before(deadline) {
		if st, err := store.ReadStatus(path); err == nil {
			if last = st; st.Status == args[1] {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("status stayed %q (last action %q), want %q", last.Status, last.LastAction, args[1])
}

// waitfile PATH: wait (up to 20 s) until PATH exists and is not empty.
func waitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(ts.MkAbs(args[0])); err == nil && len(b) > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("%s did not appear", args[0])
}

// dead PIDFILE: the process whose pid is in PIDFILE is gone (a zombie
// nobody reaped counts as gone), within 5 s.
func dead(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: dead PIDFILE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	ts.Check(err)
	gone := func() bool {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		return len(f) > 0 && f[0] == "Z"
	}
	deadline := time.Now().Add(5 * time.Second)
	for !gone() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if gone() == neg {
		ts.Fatalf("process %d: gone=%v", pid, gone())
	}
}

// signal PROJECT SIG...: send the ralph that holds PROJECT's run lock the
// signals in order (TERM, HUP, INT, KILL), as GNU timeout or a closed
// terminal would; testscript's kill knows only INT and KILL.
func signalRalph(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: signal PROJECT SIG...")
	}
	b, err := os.ReadFile(filepath.Join(ts.MkAbs(args[0]), ".ralph", "ralph.lock"))
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	ts.Check(err)
	names := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL}
	for _, name := range args[1:] {
		sig, ok := names[name]
		if !ok {
			ts.Fatalf("unknown signal %s", name)
		}
		ts.Check(syscall.Kill(pid, sig))
		time.Sleep(50 * time.Millisecond) // two signals, not one coalesced
	}
}
