package serve

import (
	"fmt"
	"net/http"

	"ralph/internal/fleet"
	"ralph/internal/metrics"
)

// openMetrics gives the daemon its metrics (docs/operating.md): one
// observer on the bus, and gauges that read the store at each scrape.
func (d *Daemon) openMetrics() {
	d.metrics = metrics.New()
	d.metrics.Gauges(metricsStore{d.db}, []string{string(fleet.Queued), string(fleet.Running), string(fleet.Waiting),
		string(fleet.Done), string(fleet.Halted), string(fleet.Cancelled)})
	// Where the loops run on workers, the workers count the calls.
	o := metrics.Observer{M: d.metrics, Remote: d.opts.Runner != nil}
	d.bus.Subscribe(func(e Event) {
		if e.Engine != nil {
			o.Observe(e.Session, *e.Engine)
		}
	}, 0)
}

// Metrics serves the daemon's metrics in the Prometheus text format, with
// no token of its own: the API puts its token in front, a listener of its
// own (--metrics-listen) does not.
func (d *Daemon) Metrics() http.Handler {
	if d.metrics == nil { // a daemon not made by Open (tests)
		return http.NotFoundHandler()
	}
	return d.metrics.Handler(metricsLog{d})
}

// timed times every request h serves, by its route pattern.
func (d *Daemon) timed(h http.Handler) http.Handler {
	if d.metrics == nil {
		return h
	}
	return d.metrics.Routes(h)
}

// metricsLog logs what a scrape could not read.
type metricsLog struct{ d *Daemon }

func (l metricsLog) Println(v ...any) { l.d.logf("metrics: %s", fmt.Sprint(v...)) }

type metricsStore struct{ db *DB }

func (s metricsStore) TaskCounts() (map[string]int, error) {
	rows, err := s.db.ro.Query(`SELECT state, COUNT(*) FROM tasks GROUP BY state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}

func (s metricsStore) OutboxPending() (int, error) {
	var n int
	err := s.db.ro.QueryRow(`SELECT COUNT(*) FROM outbox_deliveries WHERE delivered_at = 0`).Scan(&n)
	return n, err
}
