package monitor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/ratelimit"
	"ralph/internal/store"
)

// project is a temporary project whose state files are written with the
// same types and functions the engine uses.
type project struct {
	t  testing.TB
	st *store.Store
}

func newProject(t testing.TB) *project {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	return &project{t: t, st: st}
}

func (p *project) write(path, content string) {
	p.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) json(path string, v any) {
	p.t.Helper()
	if err := store.WriteJSON(path, v); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) status(s store.Status) {
	p.t.Helper()
	if err := p.st.WriteStatus(s); err != nil {
		p.t.Fatal(err)
	}
}

// populate writes a loop in the middle of iteration 13.
func (p *project) populate() {
	p.status(store.Status{
		Timestamp: t0.Add(-time.Minute), LoopCount: 12, Status: "running", LastAction: "executing",
		StartedAt: t0.Add(-time.Hour), PID: 4242, MaxCallsPerHour: 10, MaxTokensPerHour: 1000,
		Breaker: store.BreakerStatus{State: "CLOSED"},
	})
	p.json(p.st.BreakerFile(), breaker.State{Status: breaker.Closed, NoProgress: 2, CurrentLoop: 12})
	var calls ratelimit.State
	for i := range 14 {
		calls.Calls = append(calls.Calls, ratelimit.Call{At: t0.Add(time.Duration(i*5-70) * time.Minute), Tokens: 100})
	}
	p.json(p.st.RateLimitFile(), calls)
	p.write(p.st.FixPlanFile(), "# Plan\n- [x] one\n- [x] two\n- [ ] three\n## Optional\n- [ ] four\n")
	for i := 1; i <= 60; i++ {
		if err := p.st.AppendMetrics(loop.Metrics{Loop: i, DurationMS: 1000, Decision: "continue"}); err != nil {
			p.t.Fatal(err)
		}
	}
	var log strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&log, "line %d\n", i)
	}
	p.write(p.st.LogFile(), log.String())
	for n, start := range map[int]time.Time{12: t0.Add(-4 * time.Minute), 13: t0.Add(-time.Minute)} {
		out, errPath := p.st.IterationLogs(n, start)
		p.write(out, fmt.Sprintf("output of %d\n", n))
		p.write(errPath, "")
	}
}

func (p *project) source() Source {
	return Source{Store: p.st, Breaker: breaker.DefaultThresholds(), Limits: ratelimit.DefaultLimits(),
		Alive: func(int) bool { return true }}
}

func TestLoad(t *testing.T) {
	p := newProject(t)
	p.populate()
	s := Load(p.source(), t0)

	if !s.Loop.Known || !s.Loop.Running() || s.Loop.Iteration() != 13 || s.Loop.Note != "" {
		t.Errorf("loop %+v", s.Loop)
	}
	if b := s.Breaker; !b.Known || b.Summary || b.State.NoProgress != 2 || b.Thresholds.NoProgress != 3 {
		t.Errorf("breaker %+v", b)
	}
	// 14 calls 5 minutes apart from 70 minutes ago: the last 11 are in the
	// hour, over status.json's budget of 10, so the next slot is when the
	// oldest two of them have left.
	li := s.Limits
	if !li.Known || li.Calls != 11 || li.Tokens != 1100 || li.Limits.MaxCallsPerHour != 10 {
		t.Errorf("limits %+v", li)
	}
	if want := t0.Add(10 * time.Minute); !li.NextFree.Equal(want) {
		t.Errorf("next free %v, want %v", li.NextFree, want)
	}
	if c := s.Plan.Counts; !s.Plan.Known || c.Total != 4 || c.Done != 2 || c.OpenOptional != 1 {
		t.Errorf("plan %+v", s.Plan)
	}
	if len(s.Recent) != defaultRecentRows || s.Recent[0].Loop != 11 || s.Recent[len(s.Recent)-1].Loop != 60 {
		t.Errorf("recent: %d rows from %d", len(s.Recent), s.Recent[0].Loop)
	}
	if len(s.Log) != defaultLogLines || s.Log[0] != "line 301" || s.Log[len(s.Log)-1] != "line 500" {
		t.Errorf("log: %d lines, %q … %q", len(s.Log), s.Log[0], s.Log[len(s.Log)-1])
	}
	if base := filepath.Base(s.IterationLog); !strings.HasPrefix(base, "iteration_13_") || !strings.HasSuffix(base, store.StdoutSuffix) {
		t.Errorf("iteration log %q", s.IterationLog)
	}
}

func TestLoadNothing(t *testing.T) {
	p := newProject(t)
	s := Load(p.source(), t0)
	if s.Loop.Known || s.Loop.Note != "" || s.Loop.Active() || s.Plan.Known || s.Breaker.Known || len(s.Recent) != 0 || len(s.Log) != 0 {
		t.Fatalf("empty project: %+v", s)
	}
	if !s.Limits.Known || s.Limits.Calls != 0 {
		t.Errorf("limits %+v", s.Limits)
	}
	if s := Load(Source{}, t0); s.Loop.Note == "" {
		t.Error("no store, no note")
	}
}

func TestLoadCorruptFiles(t *testing.T) {
	p := newProject(t)
	p.populate()
	p.write(p.st.StatusFile(), "{\n  \"status\": \"running\",\n  oops\n}")
	p.write(p.st.BreakerFile(), `{"state": "SIDEWAYS"}`)
	p.write(p.st.RateLimitFile(), `{"calls": [{"at": "not a time"}]}`)
	f, err := os.OpenFile(p.st.MetricsFile(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "{torn")
	fmt.Fprint(f, `{"loop": 61, "decisi`)
	f.Close()

	s := Load(p.source(), t0)
	if s.Loop.Known || s.Loop.Note != "status.json is corrupt (line 3)" {
		t.Errorf("status note %q", s.Loop.Note)
	}
	if s.Breaker.Known || s.Breaker.Note != ".circuit_breaker_state is invalid" {
		t.Errorf("breaker note %q", s.Breaker.Note)
	}
	if s.Limits.Known || !strings.Contains(s.Limits.Note, ".rate_limit_state is corrupt") {
		t.Errorf("limits %+v", s.Limits)
	}
	if s.RecentNote != "2 unreadable line(s) skipped" || s.Recent[len(s.Recent)-1].Loop != 60 {
		t.Errorf("recent note %q", s.RecentNote)
	}
	m := newTestModel(80, 24)
	feedSnap(m, s)
	checkFits(t, m.View(), 80, 24)
}

func TestLoadBreakerFromStatus(t *testing.T) {
	p := newProject(t)
	p.status(store.Status{Status: "stopped", Breaker: store.BreakerStatus{State: "OPEN", Reason: "stuck"}})
	b := Load(p.source(), t0).Breaker
	if !b.Known || !b.Summary || b.State.Status != breaker.Open || b.State.Message != "stuck" {
		t.Fatalf("breaker %+v", b)
	}
}

func TestLoadDeadLoop(t *testing.T) {
	p := newProject(t)
	p.populate()
	asked := 0
	src := p.source()
	src.Alive = func(pid int) bool {
		asked++
		if pid != 4242 {
			t.Errorf("asked about pid %d", pid)
		}
		return false
	}
	s := Load(src, t0)
	if !s.Loop.Dead || s.Loop.Active() || s.Loop.Running() || s.IterationLog != "" {
		t.Fatalf("dead loop %+v, log %q", s.Loop, s.IterationLog)
	}
	p.status(store.Status{Status: "stopped", PID: 4242, ExitReason: "project_complete"})
	asked = 0
	if s := Load(src, t0); s.Loop.Dead || asked != 0 {
		t.Fatalf("a stopped loop checked for life: dead %v, asked %d", s.Loop.Dead, asked)
	}
}

func TestLoadRequests(t *testing.T) {
	p := newProject(t)
	p.populate()
	src := p.source()
	src.Requests = func() (bool, bool) { return true, false }
	if s := Load(src, t0); !s.Loop.PauseRequested || s.Loop.StopRequested {
		t.Fatalf("%+v", s.Loop)
	}
}

func TestLoaderRereadsOnlyChanges(t *testing.T) {
	p := newProject(t)
	p.populate()
	l := NewLoader(p.source())
	first := l.Load(t0)
	n := l.reads
	again := l.Load(t0.Add(6 * time.Minute))
	if l.reads != n {
		t.Fatalf("%d files read again with nothing changed", l.reads-n)
	}
	// The window slides without any file changing.
	if again.Limits.Calls >= first.Limits.Calls {
		t.Errorf("calls %d then %d a minute later", first.Limits.Calls, again.Limits.Calls)
	}
	f, err := os.OpenFile(p.st.LogFile(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "line 501")
	f.Close()
	s := l.Load(t0)
	if l.reads != n+1 || s.Log[len(s.Log)-1] != "line 501" {
		t.Fatalf("append: %d reads, last line %q", l.reads-n, s.Log[len(s.Log)-1])
	}
	// A replaced status.json is read again, and with it what depends on it.
	p.status(store.Status{Status: "stopped", ExitReason: "plan_complete", StartedAt: t0})
	s = l.Load(t0)
	if s.Loop.Status.ExitReason != "plan_complete" || s.IterationLog != "" {
		t.Fatalf("status not re-read: %+v", s.Loop.Status)
	}
}

func TestNewestIterationLog(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"iteration_9_20250601T100000Z.stdout.log",
		"iteration_10_20250601T090000Z.stdout.log",
		"iteration_10_20250601T110000Z.stdout.log", // a later run numbered the same
		"iteration_10_20250601T110000Z.stderr.log",
		"iteration_99.stdout.log",
		"ralph.log",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := filepath.Base(newestIterationLog(dir)); got != "iteration_10_20250601T110000Z.stdout.log" {
		t.Fatalf("newest %q", got)
	}
	if got := newestIterationLog(filepath.Join(dir, "missing")); got != "" {
		t.Fatalf("missing dir: %q", got)
	}
}

func TestTailLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		content string
		n       int
		max     int64
		want    []string
	}{
		{"", 5, 100, nil},
		{"a\nb\nc\n", 5, 100, []string{"a", "b", "c"}},
		{"a\nb\nc\n", 2, 100, []string{"b", "c"}},
		{"a\r\nb\r\nhalf", 5, 100, []string{"a", "b", "half"}},
		{"long first line\nb\nc\n", 5, 6, []string{"b", "c"}}, // the cut line is dropped
		{strings.Repeat("x", 100_000) + "\nend\n", 1, 1 << 20, []string{"end"}},
	} {
		write(tc.content)
		got, err := tailLines(path, tc.n, tc.max)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%.20q n=%d max=%d: %q, %v; want %q", tc.content, tc.n, tc.max, got, err, tc.want)
		}
	}
	if _, err := tailLines(filepath.Join(dir, "missing"), 1, 10); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
