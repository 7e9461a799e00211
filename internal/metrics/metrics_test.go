package metrics

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"ralph/internal/loop"
)

func iterationEnd(rec loop.Metrics) loop.Event {
	return loop.Event{Type: loop.EventIterationEnd, Loop: rec.Loop, Iteration: &rec}
}

// Events in, counter values out: each case feeds a fresh registry and
// compares the whole exposition of the families it names.
func TestObserver(t *testing.T) {
	claude := loop.Metrics{Loop: 1, Agent: "claude", Model: "opus", DurationMS: 2500, InputTokens: 100, OutputTokens: 20,
		CacheReadTokens: 5000, CacheCreationTokens: 300, CostUSD: 0.25, Breaker: "CLOSED"}
	tests := []struct {
		name   string
		remote bool
		events []loop.Event
		names  []string
		want   string
	}{
		{
			name:   "an iteration counts per session, with its call, tokens and cost",
			events: []loop.Event{iterationEnd(claude), iterationEnd(claude)},
			names:  []string{"ralph_iterations_total", "ralph_agent_calls_total", "ralph_tokens_total", "ralph_cost_usd_total"},
			want: `
# HELP ralph_agent_calls_total Agent calls made, by agent and outcome (ok, failed, timeout, usage_limit).
# TYPE ralph_agent_calls_total counter
ralph_agent_calls_total{agent="claude",outcome="ok"} 2
# HELP ralph_cost_usd_total Cost in US dollars the agents reported, by agent and model.
# TYPE ralph_cost_usd_total counter
ralph_cost_usd_total{agent="claude",model="opus"} 0.5
# HELP ralph_iterations_total Iterations recorded (one agent call each), by session.
# TYPE ralph_iterations_total counter
ralph_iterations_total{session="api"} 2
# HELP ralph_tokens_total Tokens the agents reported, by agent, model and kind (input, output, cache_read, cache_write).
# TYPE ralph_tokens_total counter
ralph_tokens_total{agent="claude",kind="cache_read",model="opus"} 10000
ralph_tokens_total{agent="claude",kind="cache_write",model="opus"} 600
ralph_tokens_total{agent="claude",kind="input",model="opus"} 200
ralph_tokens_total{agent="claude",kind="output",model="opus"} 40
`,
		},
		{
			name: "outcomes; a model not named is the agent's default",
			events: []loop.Event{
				iterationEnd(loop.Metrics{Agent: "codex", Failed: true}),
				iterationEnd(loop.Metrics{Agent: "codex", TimedOut: true, Failed: true}),
				iterationEnd(loop.Metrics{Agent: "codex", UsageLimit: true, Failed: true}),
				iterationEnd(loop.Metrics{Agent: "codex", InputTokens: 7}),
			},
			names: []string{"ralph_agent_calls_total", "ralph_tokens_total"},
			want: `
# HELP ralph_agent_calls_total Agent calls made, by agent and outcome (ok, failed, timeout, usage_limit).
# TYPE ralph_agent_calls_total counter
ralph_agent_calls_total{agent="codex",outcome="failed"} 1
ralph_agent_calls_total{agent="codex",outcome="ok"} 1
ralph_agent_calls_total{agent="codex",outcome="timeout"} 1
ralph_agent_calls_total{agent="codex",outcome="usage_limit"} 1
# HELP ralph_tokens_total Tokens the agents reported, by agent, model and kind (input, output, cache_read, cache_write).
# TYPE ralph_tokens_total counter
ralph_tokens_total{agent="codex",kind="input",model="default"} 7
`,
		},
		{
			name: "the breaker opens once per record that leaves it open; usage-limit waits, not other waits",
			events: []loop.Event{
				iterationEnd(loop.Metrics{Agent: "claude", Breaker: "CLOSED"}),
				iterationEnd(loop.Metrics{Agent: "claude", Breaker: "HALF_OPEN"}),
				iterationEnd(loop.Metrics{Agent: "claude", Breaker: "HALF_OPEN"}),
				iterationEnd(loop.Metrics{Agent: "claude", Breaker: "OPEN"}),
				{Type: loop.EventWait, WaitKind: loop.WaitUsageLimit},
				{Type: loop.EventWait, WaitKind: "rate_limit"},
				{Type: loop.EventStop, Reason: "circuit_breaker_open"},
			},
			names: []string{"ralph_breaker_opens_total", "ralph_usage_limit_waits_total"},
			want: `
# HELP ralph_breaker_opens_total Times a loop's circuit breaker opened.
# TYPE ralph_breaker_opens_total counter
ralph_breaker_opens_total 1
# HELP ralph_usage_limit_waits_total Waits for an agent's usage limit to reset.
# TYPE ralph_usage_limit_waits_total counter
ralph_usage_limit_waits_total 1
`,
		},
		{
			name: "verify runs by result",
			events: []loop.Event{
				{Type: loop.EventVerify, Verify: &loop.VerifyRun{ExitCode: 0}},
				{Type: loop.EventVerify, Verify: &loop.VerifyRun{ExitCode: 0}},
				{Type: loop.EventVerify, Verify: &loop.VerifyRun{ExitCode: 2}},
				{Type: loop.EventVerify, Verify: &loop.VerifyRun{ExitCode: -1, TimedOut: true}},
				{Type: loop.EventVerify, Verify: &loop.VerifyRun{ExitCode: -1, StartErr: "no such file"}},
			},
			names: []string{"ralph_verify_runs_total"},
			want: `
# HELP ralph_verify_runs_total Runs of the verify command on a claimed completion, by result (passed, failed, timeout, error).
# TYPE ralph_verify_runs_total counter
ralph_verify_runs_total{result="error"} 1
ralph_verify_runs_total{result="failed"} 1
ralph_verify_runs_total{result="passed"} 2
ralph_verify_runs_total{result="timeout"} 1
`,
		},
		{
			name:   "a host whose calls run on workers counts iterations, not calls, tokens, cost or verify runs",
			remote: true,
			events: []loop.Event{iterationEnd(claude), {Type: loop.EventVerify, Verify: &loop.VerifyRun{}}},
			names:  []string{"ralph_iterations_total", "ralph_agent_calls_total", "ralph_tokens_total", "ralph_cost_usd_total", "ralph_verify_runs_total"},
			want: `
# HELP ralph_iterations_total Iterations recorded (one agent call each), by session.
# TYPE ralph_iterations_total counter
ralph_iterations_total{session="api"} 1
`,
		},
		{
			name:   "live output and an iteration's start count nothing",
			events: []loop.Event{{Type: loop.EventLive}, {Type: loop.EventIterationStart, Agent: "claude"}, {Type: loop.EventIterationEnd}},
			names:  []string{"ralph_iterations_total", "ralph_agent_calls_total"},
			want:   ``,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			o := Observer{M: m, Remote: tc.remote}
			for _, ev := range tc.events {
				o.Observe("api", ev)
			}
			if err := testutil.GatherAndCompare(m.reg, strings.NewReader(tc.want), tc.names...); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestIterationDuration(t *testing.T) {
	m := New()
	o := Observer{M: m}
	o.Observe("api", iterationEnd(loop.Metrics{DurationMS: 2500}))
	o.Observe("api", iterationEnd(loop.Metrics{DurationMS: 90_000}))
	if n := testutil.CollectAndCount(m.iterDuration); n != 1 {
		t.Fatalf("histograms: %d", n)
	}
	out := gather(t, m, "ralph_iteration_duration_seconds")
	for _, want := range []string{
		`ralph_iteration_duration_seconds_bucket{le="5"} 1`,
		`ralph_iteration_duration_seconds_bucket{le="120"} 2`,
		`ralph_iteration_duration_seconds_sum 92.5`,
		`ralph_iteration_duration_seconds_count 2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %s in\n%s", want, out)
		}
	}
}

type fakeStore struct {
	counts  map[string]int
	pending int
	err     error
}

func (f fakeStore) TaskCounts() (map[string]int, error) { return f.counts, f.err }
func (f fakeStore) OutboxPending() (int, error)         { return f.pending, f.err }

// Every known state is there, at 0 when no task is in it; a state the
// store holds that the list lacks still shows.
func TestGauges(t *testing.T) {
	m := New()
	m.Gauges(fakeStore{counts: map[string]int{"done": 4, "running": 1, "archived": 2}, pending: 3}, []string{"queued", "running", "done"})
	want := `
# HELP ralph_outbox_pending Notices not yet delivered to one of their channels (one per notice and channel).
# TYPE ralph_outbox_pending gauge
ralph_outbox_pending 3
# HELP ralph_tasks Tasks in the daemon's store, by state.
# TYPE ralph_tasks gauge
ralph_tasks{state="archived"} 2
ralph_tasks{state="done"} 4
ralph_tasks{state="queued"} 0
ralph_tasks{state="running"} 1
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "ralph_tasks", "ralph_outbox_pending"); err != nil {
		t.Error(err)
	}
}

// A store that cannot be read loses its gauges from the scrape, not the
// scrape: the counters still answer, and the error is logged.
func TestGaugesUnreadable(t *testing.T) {
	m := New()
	m.Gauges(fakeStore{err: errors.New("database is locked")}, []string{"done"})
	m.breakerOpens.Inc()
	var log logLines
	rec := httptest.NewRecorder()
	m.Handler(&log).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "ralph_breaker_opens_total 1") || strings.Contains(body, "ralph_tasks{") {
		t.Errorf("%d\n%s", rec.Code, body)
	}
	if !strings.Contains(log.String(), "database is locked") {
		t.Errorf("log: %q", log.String())
	}
}

type logLines struct{ strings.Builder }

func (l *logLines) Println(v ...any) {
	for _, x := range v {
		if e, ok := x.(error); ok {
			l.WriteString(e.Error())
		} else if s, ok := x.(string); ok {
			l.WriteString(s)
		}
	}
	l.WriteString("\n")
}

// Requests are timed under the pattern they matched, however deep the
// mux that matched it; what matched nothing shares one label.
func TestRoutes(t *testing.T) {
	m := New()
	inner := http.NewServeMux()
	inner.HandleFunc("GET /api/tasks/{session}", func(w http.ResponseWriter, r *http.Request) {})
	top := http.NewServeMux()
	top.Handle("/api/", inner)
	top.HandleFunc("POST /webhooks/github", func(w http.ResponseWriter, r *http.Request) {})
	h := m.Routes(top)
	for _, p := range []string{"/api/tasks/a", "/api/tasks/b", "/api/tasks/c"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/webhooks/github", nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/nothing/here", nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/elsewhere", nil))
	out := gather(t, m, "ralph_api_request_duration_seconds")
	for _, want := range []string{
		`ralph_api_request_duration_seconds_count{route="GET /api/tasks/{session}"} 3`,
		`ralph_api_request_duration_seconds_count{route="POST /webhooks/github"} 1`,
		`ralph_api_request_duration_seconds_count{route="unmatched"} 2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %s in\n%s", want, out)
		}
	}
	if strings.Contains(out, "/api/tasks/a") {
		t.Errorf("a raw path is a label:\n%s", out)
	}
}

// The registry is the process's own, with the Go runtime's and the
// process's collectors.
func TestRuntimeCollectors(t *testing.T) {
	out := gather(t, New())
	for _, want := range []string{"go_goroutines ", "process_open_fds "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s", want)
		}
	}
}

func gather(t *testing.T, m *Metrics, names ...string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler(nil).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if len(names) == 0 {
		return rec.Body.String()
	}
	var keep []string
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		for _, n := range names {
			if strings.HasPrefix(l, n) {
				keep = append(keep, l)
			}
		}
	}
	return strings.Join(keep, "\n")
}
