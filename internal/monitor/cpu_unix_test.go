//go:build unix

package monitor

import (
	"context"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestIdleCPU runs the real program against an idle project until its
// context ends and reports the CPU it used. A measurement takes a while:
// RALPH_MONITOR_CPU=20s go test -run IdleCPU -v ./internal/monitor/ (the
// figure in docs/watching.md); without it, half a second proves the
// program runs idle and ends cleanly when asked.
func TestIdleCPU(t *testing.T) {
	d := 500 * time.Millisecond
	if v := os.Getenv("RALPH_MONITOR_CPU"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("RALPH_MONITOR_CPU=%q: %v", v, err)
		}
	}
	p := newProject(t)
	p.populate()
	in, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	before := cpuTime(t)
	start := time.Now()
	if err := Run(ctx, Options{Source: p.source(), In: in, Out: io.Discard}); err != nil {
		t.Fatal(err)
	}
	used, wall := cpuTime(t)-before, time.Since(start)
	t.Logf("%v of CPU in %v: %.3f%% of a core", used, wall.Round(time.Millisecond), 100*used.Seconds()/wall.Seconds())
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
