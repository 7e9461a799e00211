package serve

import (
	"context"
	"fmt"
	"time"

	"ralph/internal/engine"
	"ralph/internal/loop"
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

// Resumer is a Runner whose loop can wait for a person inside itself, past
// the end of its RunLoop (a Temporal workflow waits for the answer to its
// questions): the daemon tells it when the person answers or asks for more
// loops, before it queues the task again, and when the task is given up.
type Resumer interface {
	// Resume lets the task's loop, if it waits for an answer, go on with
	// a budget of maxLoops; by says who asked.
	Resume(ctx context.Context, taskID string, maxLoops int, by string) error
	// Forget ends whatever is left of the task's loop.
	Forget(ctx context.Context, taskID string) error
}

// resume hands an answer or a `loop` to a Resumer's waiting loop, on the
// task's runner: the task is queued only once the loop has the signal, and
// while the RPC waits only this task's commands wait with it.
func (d *Daemon) resume(t Task, maxLoops int, by string) error {
	r, ok := d.opts.Runner.(Resumer)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := r.Resume(ctx, t.ID, maxLoops, by); err != nil {
		return fmt.Errorf("the task's loop did not take it: %w", err)
	}
	return nil
}

// forget ends a Resumer's loop of a task given up while no worker ran it.
func (d *Daemon) forget(t Task) {
	r, ok := d.opts.Runner.(Resumer)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := r.Forget(ctx, t.ID); err != nil {
		d.logf("[%s] task %s: %v", t.Session, t.ID, err)
	}
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
	// Sight is what the daemon sees of the task's files as it hands the
	// loop over (engine.Look): the first decision's, so that the first
	// call need not look before the loop can decide; a worker that sees
	// otherwise returns before calling, and the loop decides again.
	Sight engine.Sight
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
	// Accounts are, by agent, the accounts the daemon chose for the
	// loop's calls (nil: the workers' own logins): names only, each
	// worker holds its own setting of them.
	Accounts map[string]string
	// Hold is the daemon's hold on the loop's next call (a spent daily
	// budget; nil: none), which the runner passes on as it changes: the
	// loop's calls are decided where it runs, so the daemon cannot admit
	// each one itself as it does a local loop's.
	Hold func() *loop.Hold
	// Confined says the agents must run in the sandbox (Options.Confined).
	Confined bool
	// Gate shows what the loop's calls wait on inside themselves (the
	// gate's ask and approve) and takes the people's decisions (nil: the
	// calls get no gate).
	Gate RemoteGate
	// Shutdown ends when the daemon stops: a loop whose ctx ends while
	// Shutdown has not was cancelled and must end; otherwise it goes on
	// without the daemon, which picks it up again at its next start.
	Shutdown <-chan struct{}
}

// WaitWorker is the wait kind of a loop elsewhere whose call no worker
// has taken: none holds the account it runs under.
const WaitWorker = "worker"

// runElsewhere hands the task's loop to the runner.
func (d *Daemon) runElsewhere(ctx context.Context, t Task, w *worker, ws *workspace, spec loop.Spec, st loop.State, text string) (engine.Result, []string, error) {
	spec.Policy.Agents = spec.AgentNames()
	sight, _ := engine.Look(ws, engine.PlanOptions(spec))
	// The run's spans are made here from the events the workers send
	// back; the agent's call on a worker is traced by the worker.
	run := d.traceRun(t, spec, "temporal")
	defer run.End()
	accts := d.elsewhereAccounts(t.Session, spec.Policy.Agents)
	res, end, err := d.opts.Runner.RunLoop(ctx, RunIn{TaskID: t.ID, Session: t.Session, Dir: ws.session.Dir, TaskFile: ws.FixPlanFile(),
		Prompt: text, Spec: spec, State: st, Sight: sight, Control: w.ctl, Save: ws.saveRecord, Status: func(s store.Status) { _ = ws.WriteStatus(s) },
		Emit: func(ev loop.Event) { run.Observe(ev); d.loopEvent(t, w, ev) }, SharedLimits: func() map[string]loop.AgentLimit {
			return d.elsewhereLimits(t.Session, spec.Policy.Agents, accts)
		}, Accounts: accts, Shutdown: d.ctx.Done(),
		Hold: func() *loop.Hold { return d.budgetHold(t.Session) }, Gate: d.remoteGate(t.Session),
		Confined: d.opts.Confined != nil && d.opts.Confined(ws.session.Dir)})
	return res, openQuestions(res, end), err
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
