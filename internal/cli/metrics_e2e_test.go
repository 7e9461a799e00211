package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
)

// A real Prometheus server scrapes a real daemon — the API listener with
// the bearer token, and the listener of --metrics-listen without — while a
// task runs two iterations to done; its query API then reads the
// contract's names as an operator's dashboards would.
func TestMetricsScrapedByPrometheus(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is not installed; .ci/run installs it (scripts/install-test-deps.sh)")
		}
		t.Skip("prometheus is not installed: it is what scrapes the daemon here")
	}
	const token = "metrics-e2e-token-0123456789abcdef"
	r := servetest.New(t, servetest.Options{Token: token})
	file := filepath.Join(r.Home, "handoffs", "m-task.md")
	// Two calls: the first ticks one step, the second the other, which
	// ends the task; each reports its tokens and the session's cost.
	r.Session("m", script.Script{Iterations: []script.Iteration{
		{Files: map[string]string{file: servetest.TaskFile("Count it", "m", true, false), "one.txt": "1\n"},
			StdoutLines: []json.RawMessage{servetest.Result{Session: "sess-m", Text: "Step 1." + servetest.RalphStatus("IN_PROGRESS", false, 1),
				CostUSD: 0.25, InputTokens: 100, OutputTokens: 10}.Line()}},
		{Files: map[string]string{file: servetest.TaskFile("Count it", "m", true, true), "two.txt": "2\n"},
			StdoutLines: []json.RawMessage{servetest.Result{Session: "sess-m", Text: "Step 2." + servetest.RalphStatus("IN_PROGRESS", false, 0),
				CostUSD: 0.5, InputTokens: 200, OutputTokens: 20}.Line()}},
	}})
	maddr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	r.Env = append(r.Env, "RALPH_CLAUDE_MODEL=fake-model")
	r.Extra = []string{"--metrics-listen", maddr}
	r.Start(1)

	// The API listener's /metrics wants the token; the metrics listener
	// serves it without one, and nothing of the API.
	for _, tok := range []string{"", "wrong"} {
		if code, body := r.API("GET", "/metrics", tok, ""); code != http.StatusUnauthorized || strings.Contains(body, "ralph_tasks") {
			t.Errorf("GET /metrics with token %q: %d %s", tok, code, body)
		}
	}
	if code, body := r.API("GET", "/metrics", token, ""); code != http.StatusOK || !strings.Contains(body, `ralph_tasks{state="done"} 0`) ||
		!strings.Contains(body, "go_goroutines") || !strings.Contains(body, "process_resident_memory_bytes") {
		t.Errorf("GET /metrics with the token: %d\n%s", code, body)
	}
	if code, body, err := servetest.Request(maddr, "", "GET", "/metrics", ""); err != nil || code != http.StatusOK || !strings.Contains(string(body), "ralph_outbox_pending 0") {
		t.Errorf("the metrics listener: %d %v\n%s", code, err, body)
	}
	if code, _, err := servetest.Request(maddr, token, "GET", "/api/tasks", ""); err != nil || code != http.StatusNotFound {
		t.Errorf("the metrics listener serves the API: %d %v", code, err)
	}

	api := startPrometheus(t, prom, r.Work, token, r.Addr, maddr)
	// Both targets up before the task, so the scrapes see it happen.
	api.waitFor(`sum(up{job=~"ralph|ralph-metrics"})`, 2)

	r.OK("start", "m", "Count", "it")
	r.OK("loop", "m", "10")
	v := r.WaitFor("m", "done", servetest.StateIs("done"))
	if v.LoopCount != 2 {
		t.Fatalf("the task: %+v", v)
	}
	for _, job := range []string{"ralph", "ralph-metrics"} {
		api.waitFor(fmt.Sprintf(`ralph_iterations_total{job=%q,session="m"}`, job), 2)
		api.waitFor(fmt.Sprintf(`ralph_tasks{job=%q,state="done"}`, job), 1)
	}
	api.waitFor(`ralph_tasks{job="ralph",state="running"}`, 0)
	api.waitFor(`ralph_agent_calls_total{job="ralph",agent="claude",outcome="ok"}`, 2)
	api.waitFor(`ralph_tokens_total{job="ralph",agent="claude",model="fake-model",kind="input"}`, 300)
	api.waitFor(`ralph_tokens_total{job="ralph",agent="claude",model="fake-model",kind="output"}`, 30)
	// Claude reports a resumed session's cost as a running total: the
	// second call cost 0.50 - 0.25.
	api.waitFor(`ralph_cost_usd_total{job="ralph",agent="claude",model="fake-model"}`, 0.5)
	api.waitFor(`ralph_iteration_duration_seconds_count{job="ralph"}`, 2)
	api.waitFor(`ralph_breaker_opens_total{job="ralph"}`, 0)
	// The client's requests are timed by their route, never their path.
	api.waitFor(`count(ralph_api_request_duration_seconds_count{job="ralph",route="GET /api/tasks/{session}"} > 0)`, 1)
	api.waitFor(`count(ralph_api_request_duration_seconds_count{job="ralph",route=~".*/m$"})`, 0)
}

// promAPI is a Prometheus server's query API.
type promAPI struct {
	t    *testing.T
	base string
	log  *syncbuf.Buffer
}

// startPrometheus runs a Prometheus server under dir that scrapes the
// daemon at apiAddr (with token, from a credentials file) as job "ralph"
// and its metrics listener at metricsAddr as job "ralph-metrics", every
// second.
func startPrometheus(t *testing.T, prom, dir, token, apiAddr, metricsAddr string) *promAPI {
	t.Helper()
	dir = filepath.Join(dir, "prometheus")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	cred := filepath.Join(dir, "token")
	if err := os.WriteFile(cred, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ralph
    authorization:
      type: Bearer
      credentials_file: %s
    static_configs:
      - targets: [%q]
  - job_name: ralph-metrics
    static_configs:
      - targets: [%q]
`, cred, apiAddr, metricsAddr)
	confPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	log := &syncbuf.Buffer{}
	servetest.Start(t, log, prom, os.Environ(), "--config.file", confPath, "--storage.tsdb.path", filepath.Join(dir, "data"),
		"--web.listen-address", addr)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("prometheus log:\n%s", log.String())
		}
	})
	return &promAPI{t: t, base: "http://" + addr, log: log}
}

// waitFor waits until the instant query q has one sample and it is want.
func (p *promAPI) waitFor(q string, want float64) {
	p.t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		got, ok, desc := p.query(q)
		last = desc
		if ok && got == want {
			return
		}
		// A count over nothing is no sample: it reads as 0.
		if !ok && want == 0 && desc == "no sample" {
			return
		}
	}
	p.t.Fatalf("prometheus: %s: want %v, last %s", q, want, last)
}

// query is the instant query q's one sample, or what came back instead.
func (p *promAPI) query(q string) (float64, bool, string) {
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false, err.Error()
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, false, fmt.Sprintf("%d: %v", resp.StatusCode, err)
	}
	switch {
	case body.Status != "success":
		return 0, false, body.Status + ": " + body.Error
	case len(body.Data.Result) == 0:
		return 0, false, "no sample"
	case len(body.Data.Result) > 1:
		return 0, false, fmt.Sprintf("%d samples: %v", len(body.Data.Result), body.Data.Result)
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, fmt.Sprintf("value %q", s)
	}
	return v, true, s
}

// On the Temporal backend the workers make the agent calls and count
// them — calls, tokens, cost — on their own metrics listener; the daemon
// counts the iterations it records and none of the calls, so that summing
// the fleet counts each call once.
func TestMetricsOnTemporalWorkers(t *testing.T) {
	r := newTemporalRig(t)
	file := filepath.Join(r.Home, "handoffs", "w-task.md")
	r.Session("w", script.Script{Iterations: []script.Iteration{
		{Files: map[string]string{file: servetest.TaskFile("Count it", "w", true, false), "one.txt": "1\n"},
			StdoutLines: []json.RawMessage{servetest.Result{Session: "sess-w", Text: "Step 1." + servetest.RalphStatus("IN_PROGRESS", false, 1),
				CostUSD: 0.25, InputTokens: 100, OutputTokens: 10}.Line()}},
		{Files: map[string]string{file: servetest.TaskFile("Count it", "w", true, true), "two.txt": "2\n"},
			StdoutLines: []json.RawMessage{servetest.Result{Session: "sess-w", Text: "Step 2." + servetest.RalphStatus("IN_PROGRESS", false, 0),
				CostUSD: 0.5, InputTokens: 200, OutputTokens: 20}.Line()}},
	}})
	waddr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	daddr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	r.worker("a", "--metrics-listen", waddr)
	r.Extra = append(r.Extra, "--metrics-listen", daddr)
	r.Start(1)
	r.OK("start", "w", "Count", "it")
	r.OK("loop", "w", "10")
	if v := r.WaitFor("w", "done", servetest.StateIs("done")); v.LoopCount != 2 {
		t.Fatalf("the task: %+v", v)
	}
	scrape := func(addr string) string {
		code, body, err := servetest.Request(addr, "", "GET", "/metrics", "")
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET %s/metrics: %d %v", addr, code, err)
		}
		return string(body)
	}
	worker := scrape(waddr)
	for _, want := range []string{
		`ralph_agent_calls_total{agent="claude",outcome="ok"} 2`,
		`ralph_tokens_total{agent="claude",kind="input",model="default"} 300`,
		`ralph_tokens_total{agent="claude",kind="output",model="default"} 30`,
		// The second call's share of the session's running total.
		`ralph_cost_usd_total{agent="claude",model="default"} 0.5`,
		"go_goroutines",
	} {
		if !strings.Contains(worker, want) {
			t.Errorf("the worker's metrics lack %s:\n%s", want, grepLines(worker, "ralph_"))
		}
	}
	daemon := scrape(daddr)
	for _, want := range []string{`ralph_iterations_total{session="w"} 2`, `ralph_tasks{state="done"} 1`} {
		if !strings.Contains(daemon, want) {
			t.Errorf("the daemon's metrics lack %s:\n%s", want, grepLines(daemon, "ralph_"))
		}
	}
	if strings.Contains(daemon, "ralph_agent_calls_total{") || strings.Contains(daemon, "ralph_tokens_total{") {
		t.Errorf("the daemon counts the workers' calls too:\n%s", grepLines(daemon, "ralph_"))
	}
}

// grepLines is the lines of s that begin with prefix.
func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
