package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Store is what the gauges read at each scrape: the daemon's store.
type Store interface {
	// TaskCounts is how many tasks the store keeps in each state.
	TaskCounts() (map[string]int, error)
	// OutboxPending is how many notices are owed to a channel still.
	OutboxPending() (int, error)
}

// Gauges registers the gauges that read s at each scrape:
// ralph_tasks{state}, with every state in states present (0 when no task
// is in it), and ralph_outbox_pending.
func (m *Metrics) Gauges(s Store, states []string) {
	m.reg.MustRegister(&storeGauges{s: s, states: states})
}

var (
	tasksDesc  = prometheus.NewDesc("ralph_tasks", "Tasks in the daemon's store, by state.", []string{"state"}, nil)
	outboxDesc = prometheus.NewDesc("ralph_outbox_pending",
		"Notices not yet delivered to one of their channels (one per notice and channel).", nil, nil)
)

type storeGauges struct {
	s      Store
	states []string
}

func (g *storeGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- tasksDesc
	ch <- outboxDesc
}

func (g *storeGauges) Collect(ch chan<- prometheus.Metric) {
	if counts, err := g.s.TaskCounts(); err != nil {
		ch <- prometheus.NewInvalidMetric(tasksDesc, err)
	} else {
		seen := map[string]bool{}
		for _, st := range g.states {
			seen[st] = true
			ch <- prometheus.MustNewConstMetric(tasksDesc, prometheus.GaugeValue, float64(counts[st]), st)
		}
		// A state the store holds that this build does not know still
		// counts.
		for st, n := range counts {
			if !seen[st] {
				ch <- prometheus.MustNewConstMetric(tasksDesc, prometheus.GaugeValue, float64(n), st)
			}
		}
	}
	if n, err := g.s.OutboxPending(); err != nil {
		ch <- prometheus.NewInvalidMetric(outboxDesc, err)
	} else {
		ch <- prometheus.MustNewConstMetric(outboxDesc, prometheus.GaugeValue, float64(n))
	}
}
