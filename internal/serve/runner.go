package serve

import (
	"context"

	"ralph/internal/engine"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/store"
)

// Runner runs a task's loop somewhere else than in this process (the
// Temporal backend: a workflow on `ralph worker` processes). The daemon
// keeps the tasks, the API and the views; the runner reports the loop's
// progress through In's callbacks so that those views stay what they are
// on the local backend.
type Runner interface {
	RunLoop(ctx context.Context, in RunIn) (engine.Result, loop.State, error)
}

// RunIn is one task's loop for a Runner.
type RunIn struct {
	TaskID, Session string
	Dir, TaskFile   string
	Prompt          string
	// Spec is the loop as the daemon resolved it; Policy.Budget.MaxLoops
	// is what is left of the task's budget.
	Spec  loop.Spec
	State loop.State
	// Control carries stop and breaker-reset requests.
	Control engine.Controller
	// Save records a state and an iteration's record in the daemon's
	// store (history, breaker); the task file's status is the worker's to
	// rewrite (RewriteTaskStatus), as the agent's next call may be
	// writing the file meanwhile.
	Save func(loop.State, *loop.Metrics) error
	// Status publishes what the loop is doing.
	Status func(store.Status)
	// Emit publishes a loop event (the log, the event stream, the
	// notices), as the local engine's events are.
	Emit func(loop.Event)
	// SharedLimits are the usage limits any loop of the daemon saw, by
	// agent (one account): the runner hands them to its loop.
	SharedLimits func() map[string]loop.AgentLimit
	// Shutdown ends when the daemon stops: a loop whose ctx ends while
	// Shutdown has not was cancelled and must end; otherwise it goes on
	// without the daemon, which picks it up again at its next start.
	Shutdown <-chan struct{}
}

// runElsewhere hands the task's loop to the runner.
func (d *Daemon) runElsewhere(ctx context.Context, t Task, w *worker, ws *workspace, spec loop.Spec, st loop.State, text string) (engine.Result, []string, error) {
	spec.Policy.Agents = spec.AgentNames()
	res, end, err := d.opts.Runner.RunLoop(ctx, RunIn{TaskID: t.ID, Session: t.Session, Dir: ws.session.Dir, TaskFile: ws.FixPlanFile(),
		Prompt: text, Spec: spec, State: st, Control: w.ctl, Save: ws.saveRecord, Status: func(s store.Status) { _ = ws.WriteStatus(s) },
		Emit: func(ev loop.Event) { d.observe(t, ev) }, SharedLimits: d.sharedLimits, Shutdown: d.ctx.Done()})
	var questions []string
	if res.Reason == reason.NeedsClarification {
		questions = end.Last.Questions
	}
	return res, questions, err
}

// saveRecord is SaveState without the task file.
func (w *workspace) saveRecord(st loop.State, rec *loop.Metrics) error {
	if err := w.db.SaveState(w.session.Name, w.taskID, st, rec); err != nil {
		return err
	}
	if w.onSave != nil {
		w.onSave(st)
	}
	return nil
}

// RewriteTaskStatus rewrites a task file's status from an iteration's
// status block, as the local backend does after each iteration: a worker
// does it right after the call, before the next one can touch the file.
func RewriteTaskStatus(path, status string, block map[string]string) error {
	if s := block["STATUS"]; s != "" {
		status = s
	}
	return rewriteTaskFile(path, status, blockFields(block))
}
