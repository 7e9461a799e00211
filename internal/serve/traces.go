package serve

import (
	"strings"

	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/tracing"
)

// traceRun starts the spans of one loop run of t (nil when traces are
// off).
func (d *Daemon) traceRun(t Task, spec loop.Spec, backend string) *tracing.Run {
	return d.opts.Tracer.Start(tracing.RunInfo{TaskID: t.ID, Session: t.Session, Backend: backend, Agents: spec.Agents})
}

// traceTask is the bus's observer for the waits that outlive a loop run:
// a task that asked a question waits for its answer with no loop running.
func (d *Daemon) traceTask(e Event) {
	if e.Engine != nil || e.TaskID == "" {
		return
	}
	switch {
	case e.Type == "task_waiting" && e.State == fleet.Waiting && strings.HasPrefix(e.Message, string(reason.NeedsClarification)):
		d.opts.Tracer.QuestionWait(e.TaskID, e.Session, e.At)
	case e.Type == "task_answered":
		d.opts.Tracer.Answered(e.TaskID, e.At, "answer")
	case e.State.Finished():
		d.opts.Tracer.Answered(e.TaskID, e.At, string(e.State))
	}
}
