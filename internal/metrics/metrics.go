// Package metrics is what ralph tells Prometheus: the names below are a
// contract (docs/operating.md lists them), fed by one observer of a host's
// loop events and by gauges that read the daemon's store at each scrape,
// never by counters scattered through the code. Each process keeps its own
// registry: nothing here is global.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Token kinds of ralph_tokens_total.
const (
	KindInput      = "input"
	KindOutput     = "output"
	KindCacheRead  = "cache_read"
	KindCacheWrite = "cache_write"
)

// Metrics are one process's metrics and the registry that serves them.
type Metrics struct {
	reg *prometheus.Registry

	iterations   *prometheus.CounterVec // session
	iterDuration prometheus.Histogram
	calls        *prometheus.CounterVec // agent, outcome
	tokens       *prometheus.CounterVec // agent, model, kind
	cost         *prometheus.CounterVec // agent, model
	breakerOpens prometheus.Counter
	limitWaits   prometheus.Counter
	verifyRuns   *prometheus.CounterVec   // result
	apiDuration  *prometheus.HistogramVec // route
}

// New is a fresh registry holding the Go runtime's and the process's
// collectors and ralph's counters.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		iterations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ralph_iterations_total",
			Help: "Iterations recorded (one agent call each), by session."}, []string{"session"}),
		iterDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ralph_iteration_duration_seconds",
			Help:    "How long an iteration's agent call took.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200}}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ralph_agent_calls_total",
			Help: "Agent calls made, by agent and outcome (ok, failed, timeout, usage_limit)."}, []string{"agent", "outcome"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ralph_tokens_total",
			Help: "Tokens the agents reported, by agent, model and kind (input, output, cache_read, cache_write)."},
			[]string{"agent", "model", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ralph_cost_usd_total",
			Help: "Cost in US dollars the agents reported, by agent and model."}, []string{"agent", "model"}),
		breakerOpens: prometheus.NewCounter(prometheus.CounterOpts{Name: "ralph_breaker_opens_total",
			Help: "Times a loop's circuit breaker opened."}),
		limitWaits: prometheus.NewCounter(prometheus.CounterOpts{Name: "ralph_usage_limit_waits_total",
			Help: "Waits for an agent's usage limit to reset."}),
		verifyRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ralph_verify_runs_total",
			Help: "Runs of the verify command on a claimed completion, by result (passed, failed, timeout, error)."},
			[]string{"result"}),
		apiDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ralph_api_request_duration_seconds",
			Help:    "HTTP requests to the daemon, by route pattern (an event stream counts its whole connection).",
			Buckets: prometheus.DefBuckets}, []string{"route"}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.iterations, m.iterDuration, m.calls, m.tokens, m.cost, m.breakerOpens, m.limitWaits, m.verifyRuns, m.apiDuration)
	return m
}

// Handler serves the registry in the Prometheus text format. A gauge that
// cannot be read is left out of the answer (and logged to errLog, when set)
// rather than failing the whole scrape.
func (m *Metrics) Handler(errLog promhttp.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: errLog})
}

// Routes times every request h serves under the route pattern the
// request matched (a ServeMux sets it, the innermost one last), never its
// path: the label's values stay as few as the routes.
func (m *Metrics) Routes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		m.apiDuration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}
