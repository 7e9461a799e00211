// Package servetest runs the real ralph binary as a daemon: the rig the
// end-to-end tests of `ralph serve` (internal/cli, internal/dashboard,
// internal/e2e) and the load scripts share, so that how the binary is
// built, how a daemon is started, waited for, asked and stopped, and what
// the scripted agent prints live in one place and not in a copy per test
// package. Only tests and scripts import it.
package servetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"ralph/internal/agent/fakeagent/script"
)

// builds holds what was built for this test binary, removed by Tests.
var builds struct {
	mu    sync.Mutex
	dir   string // "" until Tests runs the tests: no dir, no build
	ralph map[bool]*build
	fake  *build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// Tests is m (the *testing.M of a TestMain) whose Run also removes the
// binaries Ralph, PlainRalph and Fake built for the tests: a package that
// uses them has `os.Exit(servetest.Tests(m).Run())` as its TestMain, or
// hands Tests(m) to testscript.Main.
func Tests(m interface{ Run() int }) interface{ Run() int } { return tests{m} }

type tests struct{ m interface{ Run() int } }

func (w tests) Run() int {
	dir, err := os.MkdirTemp("", "ralph-servetest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "servetest:", err)
		return 1
	}
	builds.mu.Lock()
	builds.dir = dir
	builds.mu.Unlock()
	defer os.RemoveAll(dir)
	return w.m.Run()
}

// Ralph is the ralph binary built from this tree, once per test binary;
// with the race detector when the tests have it, so that a data race in
// the daemon fails them too.
func Ralph(t testing.TB) string {
	t.Helper()
	return ralph(t, raceEnabled)
}

// PlainRalph is Ralph without the race detector whatever the tests are
// built with: for tests whose timing a race build would change, such as
// kills at random moments or real agent CLIs with their own timeouts.
func PlainRalph(t testing.TB) string {
	t.Helper()
	return ralph(t, false)
}

func ralph(t testing.TB, race bool) string {
	t.Helper()
	dir := buildDir(t)
	builds.mu.Lock()
	if builds.ralph == nil {
		builds.ralph = map[bool]*build{}
	}
	b := builds.ralph[race]
	if b == nil {
		b = &build{}
		builds.ralph[race] = b
	}
	builds.mu.Unlock()
	name := "ralph"
	if race {
		name = "ralph-race"
	}
	b.once.Do(func() {
		b.path = filepath.Join(dir, name)
		b.err = BuildRalph(b.path, race)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Fake is the scripted fake agent (package script), built once per test
// binary.
func Fake(t testing.TB) string {
	t.Helper()
	dir := buildDir(t)
	builds.mu.Lock()
	if builds.fake == nil {
		builds.fake = &build{}
	}
	b := builds.fake
	builds.mu.Unlock()
	b.once.Do(func() { b.path, b.err = script.Build(dir) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func buildDir(t testing.TB) string {
	t.Helper()
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir == "" {
		t.Fatal("servetest: the package's TestMain must run servetest.Tests(m), which removes what is built for its tests")
	}
	return builds.dir
}

// BuildRalph builds ralph/cmd/ralph into path, with -race if race.
func BuildRalph(path string, race bool) error {
	args := []string{"build", "-o", path}
	if race {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, "ralph/cmd/ralph")...).CombinedOutput(); err != nil {
		return fmt.Errorf("build ralph: %v\n%s", err, out)
	}
	return nil
}
