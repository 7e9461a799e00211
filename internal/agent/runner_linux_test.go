package agent

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// running reports whether pid is a live (non-zombie) process. Zombies count
// as dead: where PID 1 does not reap orphans they never disappear.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	state, _, ok := parseStat(b)
	return ok && state != 'Z' && state != 'X'
}

func TestRunOwnProcessGroup(t *testing.T) {
	p := proc(t, "/bin/sh", "-c", `cut -d' ' -f5 /proc/$$/stat; echo $$`)
	if _, err := testRunner().Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(readFile(t, p.StdoutPath))
	if len(f) != 2 || f[0] != f[1] || f[0] == strconv.Itoa(os.Getpid()) {
		t.Errorf("pgid, pid = %q: want the agent to lead its own group", f)
	}
}

// OnStart hands the host the agent's group id while it runs.
func TestRunReportsProcessGroup(t *testing.T) {
	p := proc(t, "/bin/sh", "-c", `echo $$`)
	got := 0
	p.OnStart = func(pgid int) { got = pgid }
	if _, err := testRunner().Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(readFile(t, p.StdoutPath)); strconv.Itoa(got) != want {
		t.Errorf("OnStart got %d, the agent's pid (its group) is %s", got, want)
	}
}

func TestParseStat(t *testing.T) {
	state, pg, ok := parseStat([]byte("1234 (a (weird) name) S 1 777 777 0 -1"))
	if !ok || state != 'S' || pg != 777 {
		t.Errorf("parseStat = %c %d %v", state, pg, ok)
	}
	if _, _, ok := parseStat([]byte("garbage")); ok {
		t.Error("garbage parsed")
	}
}

func threads(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// Running agents take no OS thread each: none is pinned per call for the
// parent-death signal, and none blocks waiting for its agent (a daemon
// runs hundreds at once). Each still ends normally and is reaped.
func TestRunAgentsTakeNoThreadEach(t *testing.T) {
	const n = 40
	base := threads(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		p := proc(t, "/bin/sh", "-c", "sleep 2; echo ok")
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := testRunner().Run(context.Background(), p)
			if err == nil && (res.ExitCode != 0 || strings.TrimSpace(readFile(t, p.StdoutPath)) != "ok") {
				err = fmt.Errorf("result %+v, stdout %q", res, readFile(t, p.StdoutPath))
			}
			errs <- err
		}()
	}
	time.Sleep(time.Second)
	during := threads(t)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if during-base >= n/2 {
		t.Errorf("%d threads with %d agents running, %d before: a thread per agent", during, n, base)
	}
}
