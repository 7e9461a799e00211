package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/gitx"
	"ralph/internal/loop"
	"ralph/internal/ratelimit"
	"ralph/internal/stop"
	"ralph/internal/store"
)

// instantAgent answers at once with a canned output: what is measured is
// ralph's own work around a call (plan, context, analysis, decisions,
// state files, status, metrics), not the agent's.
type instantAgent struct{ out string }

func (instantAgent) Name() string                               { return "instant" }
func (instantAgent) Capabilities() agent.Capabilities           { return agent.Capabilities{} }
func (instantAgent) Command(agent.Invocation) ([]string, error) { return nil, nil }
func (a instantAgent) Run(_ context.Context, inv agent.Invocation) (agent.Result, error) {
	if err := os.WriteFile(inv.StdoutPath, []byte(a.out), 0o644); err != nil {
		return agent.Result{}, err
	}
	f, err := os.Open(inv.StdoutPath)
	if err != nil {
		return agent.Result{}, err
	}
	defer f.Close()
	an, err := analyze.Analyze(f, analyze.Options{ExitCode: 0, Now: time.Now()})
	return agent.Result{Analysis: an}, err
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchLoop(b *testing.B) {
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
	var plan strings.Builder
	for i := 0; i < 50; i++ {
		plan.WriteString("- [ ] task " + strconv.Itoa(i) + "\n")
	}
	for name, content := range map[string]string{"PROMPT.md": "Work.\n", "fix_plan.md": plan.String(), "AGENT.md": "x\n"} {
		os.WriteFile(filepath.Join(dir, ".ralph", name), []byte(content), 0o644)
	}
	st, _ := store.Open(dir)
	defer st.KeepSpares()() // as ralph run does
	out := result("Step done."+block("IN_PROGRESS", false, "PASSING"), "")
	n := 0
	deps := Deps{Agents: []agent.Adapter{instantAgent{out: out}}, Store: st, Sleep: func(context.Context, time.Duration) error { return nil }}
	// git runs in child processes (about 10 ms of wall time per snapshot on
	// a 2,000-file repo, see internal/gitx); here a change is reported
	// directly so only ralph's own work is measured.
	deps.Snapshot = func(context.Context, string) (gitx.Snap, error) { return gitx.Snap{InRepo: true}, nil }
	deps.SnapshotAfter = func(context.Context, string, gitx.Snap) (gitx.Snap, error) {
		n++
		return gitx.Snap{InRepo: true, Paths: map[string]string{"f": strconv.Itoa(n)}}, nil
	}
	spec := loop.Spec{OutputFormat: "json", Policy: loop.Policy{Budget: stop.Budget{MaxLoops: b.N}, Breaker: breaker.DefaultThresholds(), Limits: ratelimit.Limits{MaxCallsPerHour: 1 << 30}}}
	eng := New(spec, deps)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	res, err := eng.Run(context.Background())
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if err != nil || res.Reason != "max_loops" {
		b.Fatalf("%+v %v", res, err)
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/iter")
}

func BenchmarkLoopIteration(b *testing.B) { benchLoop(b) }
