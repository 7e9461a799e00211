package worker

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"ralph/internal/agent"
	"ralph/internal/agent/command"
	"ralph/internal/loop"
	"ralph/internal/servetest"
	wf "ralph/internal/temporal"
)

// gitCounter puts a git on PATH that logs each run before it runs the
// real one, and counts the runs of a subcommand.
func gitCounter(t *testing.T) func(sub string) int {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "git.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func(sub string) int {
		b, _ := os.ReadFile(log)
		n := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(" "+l+" ", " "+sub+" ") {
				n++
			}
		}
		return n
	}
}

func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), servetest.Vars(t.TempDir())...)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		if out, err := servetest.Git(dir, env, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// A worker keeps what a session's call read and measured for the next
// call of the session it runs: the settings, while the .ralphrc and the
// trust record stay as they were, and the snapshot taken after the call,
// which the next call starts from only when the workflow says that call
// was the last one it folded. Each reuse is one git status, one git
// rev-parse and one settings read fewer per iteration, as in `ralph run`.
func TestIterateCarriesSettingsAndSnapshotToTheNextCall(t *testing.T) {
	t.Setenv("RALPH_TRUST_FILE", filepath.Join(t.TempDir(), "trusted.json"))
	dir := gitRepo(t, map[string]string{"work.txt": "0\n", ".ralphrc": "MAX_CALLS_PER_HOUR=100\n"})
	count := gitCounter(t)
	taskFile := filepath.Join(t.TempDir(), "task.md")
	if err := os.WriteFile(taskFile, []byte("# Task: t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	builds := 0
	acts := &Activities{Home: t.TempDir(), Build: func(string, io.Writer) (loop.Spec, []agent.Adapter, error) {
		builds++
		ad, err := command.New(`sh -c 'echo x >> work.txt; mktemp -p . new.XXXXXX; echo done'`)
		return loop.Spec{}, []agent.Adapter{ad}, err
	}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts.Iterate, activity.RegisterOptions{Name: wf.ActivityIterate})
	type seen struct{ builds, status, revParse int }
	call := func(st loop.State, before string) (wf.IterateOutput, seen) {
		t.Helper()
		b, s, r := builds, count("status"), count("rev-parse")
		v, err := env.ExecuteActivity(wf.ActivityIterate, wf.IterateInput{TaskID: "t1", Session: "s1", Dir: dir, TaskFile: taskFile,
			Prompt: "work", State: st, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		var out wf.IterateOutput
		if err := v.Get(&out); err != nil {
			t.Fatal(err)
		}
		if !out.Changed || out.Files != 2 {
			t.Errorf("loop %d measured changed=%v files=%d, want its two files", out.Loop, out.Changed, out.Files)
		}
		return out, seen{builds - b, count("status") - s, count("rev-parse") - r}
	}

	first, got := call(loop.State{}, "")
	if first.After == "" || got != (seen{1, 2, 1}) {
		t.Fatalf("first call: after %q, %+v; want a snapshot kept, and a build, two statuses and a rev-parse", first.After, got)
	}
	second, got := call(loop.State{Loop: first.Loop}, first.After)
	if got != (seen{0, 1, 0}) {
		t.Errorf("the call after it: %+v, want the settings and the snapshot reused (one status)", got)
	}
	if second.After == "" || second.After == first.After {
		t.Errorf("second call's snapshot named %q after %q, want a new name", second.After, first.After)
	}

	// The workflow folded a call made elsewhere since (or none): the
	// tree may have changed, so the call looks again.
	third, got := call(loop.State{Loop: second.Loop}, "another worker's")
	if got != (seen{0, 2, 1}) {
		t.Errorf("after a call made elsewhere: %+v, want the settings reused and a fresh snapshot", got)
	}

	// A changed .ralphrc, or a changed trust record, is read again.
	if err := os.WriteFile(filepath.Join(dir, ".ralphrc"), []byte("MAX_CALLS_PER_HOUR=50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fourth, got := call(loop.State{Loop: third.Loop}, third.After)
	if got.builds != 1 {
		t.Errorf("after .ralphrc changed: %d builds, want 1", got.builds)
	}
	if err := os.WriteFile(os.Getenv("RALPH_TRUST_FILE"), []byte("[]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, got := call(loop.State{Loop: fourth.Loop}, fourth.After); got.builds != 1 {
		t.Errorf("after the trust record changed: %d builds, want 1", got.builds)
	}
}
