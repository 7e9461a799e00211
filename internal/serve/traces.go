package serve

import (
	"ralph/internal/loop"
	"ralph/internal/tracing"
)

// traceRun starts the spans of one loop run of t (nil when traces are
// off).
func (d *Daemon) traceRun(t Task, spec loop.Spec, backend string) *tracing.Run {
	return d.opts.Tracer.Start(tracing.RunInfo{TaskID: t.ID, Session: t.Session, Backend: backend, Agents: spec.Agents})
}
