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

// TestIdleCPU runs the real program against an idle project and reports
// the CPU it used. It takes a while, so it only runs when asked:
// RALPH_MONITOR_CPU=20s go test -run IdleCPU -v ./internal/monitor/
func TestIdleCPU(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("RALPH_MONITOR_CPU"))
	if err != nil {
		t.Skip("set RALPH_MONITOR_CPU to a duration to measure")
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
