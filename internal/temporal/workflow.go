// Package temporal is the fleet's second backend: a task's loop as a
// Temporal workflow. The workflow holds the loop's State and runs the same
// pure loop.Next and loop.Fold as the local engine, as deterministic
// workflow code (workflow.Now is its clock, timers its waits); each agent
// call is an activity (ActivityIterate) that a `ralph worker` runs through
// engine.Measure and that returns the small loop.Iteration, never the
// transcript. Stop, pause and breaker reset arrive as a signal; status is a
// query, which the daemon asks after a decision no call's input carries;
// the watch update answers with it once it has changed, for a daemon of an
// earlier release.
//
// This package is what the two sides share: the workflow, its names on
// the wire, and the types its history holds. The daemon's side, which
// starts and follows the workflows for `ralph serve --backend temporal`,
// is package daemon; the worker's, which runs them and their agent calls
// for `ralph worker`, is package worker.
package temporal

import (
	"reflect"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"ralph/internal/engine"
	"ralph/internal/gate"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/stop"
)

// Names on the wire: changing one breaks running workflows.
const (
	WorkflowName    = "ralph.task"
	ActivityIterate = "ralph.iterate"
	// ActivityVerify runs the session's verify command on a claimed
	// completion, where its calls run (the verify gate).
	ActivityVerify = "ralph.verify"
	SignalControl  = "control"
	// SignalLimits carries the usage limits other tasks of the fleet saw
	// (map[agent]loop.AgentLimit): one account's limit holds them all.
	SignalLimits = "limits"
	// SignalHold carries the daemon's hold on new calls (*loop.Hold, nil:
	// none): a spent daily budget of the fleet.
	SignalHold = "hold"
	// SignalResume ends a wait for a person (Resume).
	SignalResume = "resume"
	QueryStatus  = "status"
	// UpdateWatch answers with the Status once its Seq is past the one
	// asked for (an int): how a daemon of an earlier release followed the
	// workflow.
	UpdateWatch  = "watch"
	DefaultQueue = "ralph"
)

// Workflow versions (workflow.GetVersion): a running workflow keeps the
// behaviour it started with when it is replayed.
const (
	// versionQuestionWait: a question is a wait for the answer inside the
	// workflow; before it, a question ended the workflow. Version 1 waited
	// in code of its own for the resume signal, and the answer started a
	// new run; version 2 is loop.Next's wait (loop.WaitAnswer), the answer
	// in the control signal (loop.Control.Answer) and the next call's
	// prompt, in the same run, as on the local engine.
	versionQuestionWait = "question-wait"
	// versionLook: each call looks at the files first (the required
	// files, the plan: engine.Look) and is made only if they are as the
	// workflow saw them, and the decision after it sees them as the call
	// left them. Before it, the plan Next saw was the last call's and the
	// required files were never checked.
	versionLook = "look"
	// versionCallStatus: a call's input carries the status as the call
	// begins (IterateInput.Status), which the daemon reads from the
	// history instead of asking the status query after the decision.
	// Before it, no input carried it: the recorded histories replay
	// without it, and the daemon queries for them as before.
	versionCallStatus = "call-status"
)

// Defaults of Input's tunables.
const (
	// DefaultHeartbeat is how long a silent activity lives: a worker killed
	// mid-iteration is noticed this long after its last heartbeat and the
	// iteration retried on another worker.
	DefaultHeartbeat = 30 * time.Second
	// DefaultTakeoverAfter is how long a pinned call waits for its host
	// before a takeover worker runs it: longer than a call waits for a
	// free slot on a busy host.
	DefaultTakeoverAfter = 5 * time.Minute
	// DefaultIterationTimeout bounds one agent call when the loop sets no
	// timeout of its own.
	DefaultIterationTimeout = 2 * time.Hour
	// ContinueAfter is how many iterations one run of the workflow makes
	// before it continues as new: an iteration adds about a dozen events,
	// so the history stays far below Temporal's limits.
	ContinueAfter = 200
	// recordsKept is how many iteration records the workflow carries (the
	// task view shows the last five).
	recordsKept = 5
)

// WorkflowID is the task's workflow id: one task, one workflow, so a
// request can never run twice at once.
func WorkflowID(taskID string) string { return "ralph-task-" + taskID }

// Task is the workflow: Next decides, an activity calls the agent, Fold
// folds the result in, until a stop.
func Task(ctx workflow.Context, in Input) (Output, error) {
	// A workflow always has a person who can answer (its daemon's
	// surfaces), whatever the input says: histories recorded before the
	// policy said so must fold a question as they did.
	in.Policy.Answerable = true
	w := &run{in: in, policy: in.Policy, st: in.State, ctl: in.Control, records: in.Records, plan: in.Plan,
		host: in.HostQueue, dir: in.Dir, snap: in.Snapshot, adrift: in.Adrift, sight: in.Sight, seq: in.Seq,
		grants: in.Grants, asks: in.Asks}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return w.status(), nil }); err != nil {
		return Output{}, err
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateWatch, func(ctx workflow.Context, after int) (Status, error) {
		// A task has one daemon, which watches once at a time: a new
		// watch answers those before it, which a daemon that restarted
		// or stopped following (a question) left waiting, so that they
		// never pile up to the server's bound on updates in flight.
		w.watches++
		mine := w.watches
		err := workflow.Await(ctx, func() bool { return w.seq > after || w.closing || w.watches != mine })
		return w.status(), err
	}); err != nil {
		return Output{}, err
	}
	if err := w.setGateHandlers(ctx); err != nil {
		return Output{}, err
	}
	out, err := w.body(ctx)
	// A watch waiting for the next change gets the last one: the run is
	// over (the daemon has its Output, or follows the run it continued as).
	w.closing = true
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.Await(dctx, func() bool { return workflow.AllHandlersFinished(dctx) })
	return out, err
}

// body is the workflow: Task without its handlers.
func (w *run) body(ctx workflow.Context) (Output, error) {
	in := w.in
	now := func() time.Time { return workflow.Now(ctx).UTC().Round(0) }
	w.look = workflow.GetVersion(ctx, versionLook, workflow.DefaultVersion, 1) == 1
	w.tell = workflow.GetVersion(ctx, versionCallStatus, workflow.DefaultVersion, 1) == 1
	if in.Gate {
		// Only a gated run asks: the histories before it replay as they
		// were, and a run its daemon started ungated stays so.
		w.gated = workflow.GetVersion(ctx, versionGate, workflow.DefaultVersion, 1) == 1
	}
	// The agent session lives in the state; an input from before kept it
	// beside. Adopting it changes no command, so histories replay as
	// they were.
	w.st = loop.AdoptSession(w.st, in.AgentSession, now())
	if !in.Begun {
		w.st, _ = loop.Begin(w.st, now(), w.policy)
	}
	signals := workflow.GetSignalChannel(ctx, SignalControl)
	limits := workflow.GetSignalChannel(ctx, SignalLimits)
	holds := workflow.GetSignalChannel(ctx, SignalHold)
	var shared map[string]loop.AgentLimit
	w.hold = in.Hold
	drain := func() {
		var c loop.Control
		for signals.ReceiveAsync(&c) {
			w.ctl = c
		}
		var l map[string]loop.AgentLimit
		for limits.ReceiveAsync(&l) {
			shared = l
		}
		var h *loop.Hold
		for holds.ReceiveAsync(&h) {
			w.hold = h
		}
	}
	limit := in.ContinueAfter
	if limit <= 0 {
		limit = ContinueAfter
	}
	for calls := 0; ; {
		drain()
		obs := loop.Observation{Now: now(), Plan: w.plan, Control: w.ctl, SharedLimits: shared}
		if w.look {
			// What the last call saw (nil before the first: the next call
			// looks, and the loop decides again with what it saw).
			var seen engine.Sight
			if w.sight != nil {
				seen = *w.sight
			}
			obs = seen.Observation(now(), w.ctl, shared)
		}
		// No history before the daemon's holds carries one: replays see nil.
		obs.Hold = w.hold
		var step loop.Step
		before := w.st
		w.st, step = loop.Next(w.st, obs, w.policy)
		switch step.Kind {
		case loop.Stop:
			return w.end(step.Reason, step.Message), nil
		case loop.Check:
			// A plan complete before a call is a claim like any other.
			d, err := w.check(ctx, loop.Decision{Kind: loop.Check, Reason: step.Reason, Message: step.Message})
			if err != nil {
				return w.end(reason.Interrupted, "cancelled"), err
			}
			if d.Kind == loop.Stop {
				return w.end(d.Reason, d.Message), nil
			}
			continue
		case loop.Wait:
			w.activity, w.until = "waiting: "+step.WaitKind, step.Until
			if step.WaitKind == loop.WaitPaused {
				w.activity = "paused"
			}
			// A durable timer, cut short by any request: the next Next
			// looks at it.
			w.publish()
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) {
				var x loop.Control
				c.Receive(ctx, &x)
				w.ctl = x
			})
			sel.AddReceive(limits, func(c workflow.ReceiveChannel, _ bool) {
				c.Receive(ctx, &shared)
			})
			sel.AddReceive(holds, func(c workflow.ReceiveChannel, _ bool) {
				c.Receive(ctx, &w.hold)
			})
			// A wait with no end (a pause, a question) ends on a cancel
			// too; one with a timer ends with its timer.
			sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
			if !step.Until.IsZero() {
				tctx, cancel := workflow.WithCancel(ctx)
				sel.AddFuture(workflow.NewTimer(tctx, step.Until.Sub(now())), func(workflow.Future) {})
				sel.Select(ctx)
				cancel()
			} else {
				sel.Select(ctx)
			}
			if ctx.Err() != nil {
				return w.end(reason.Interrupted, "cancelled"), temporal.NewCanceledError()
			}
			continue
		}
		if calls >= limit {
			next := in
			next.State, next.Begun, next.Control, next.Records, next.AgentSession, next.Plan = w.st, true, w.ctl, w.records, w.st.Session.ID, w.plan
			next.Policy, next.HostQueue, next.Dir, next.Snapshot, next.Adrift = w.policy, w.host, w.dir, w.snap, w.adrift
			next.Sight, next.Seq, next.Hold = w.sight, w.seq, w.hold
			next.Grants, next.Asks = w.grants, w.asks
			return Output{}, workflow.NewContinueAsNewError(ctx, WorkflowName, next)
		}
		calls++
		w.activity, w.until = "executing", time.Time{}
		out, err := w.iterate(ctx, step.Agent)
		it := out.Iteration
		if err != nil {
			if ctx.Err() != nil {
				return w.end(reason.Interrupted, "cancelled"), temporal.NewCanceledError()
			}
			return Output{}, err
		}
		if out.Unspent {
			// The files were not as the decision saw them: decide again.
			w.sight = out.Sight
			continue
		}
		var d loop.Decision
		w.st, d = loop.Fold(w.st, it, w.policy)
		w.plan = it.Plan
		if w.look {
			w.sight = out.Sight
		}
		rec := loop.Record(it, d, w.st)
		// What `ralph replay` needs to make these decisions again; data
		// in the record, no workflow command.
		rec.Replay = &loop.Replay{V: loop.ReplayVersion, Policy: w.policy, Before: before, Observation: obs, Iteration: it,
			Next: loop.StepLabel(step, w.policy), Fold: d.Label()}
		if d.Kind == loop.Check {
			claim := d
			if d, err = w.check(ctx, claim); err != nil {
				return w.end(reason.Interrupted, "cancelled"), err
			}
			rec.Verify, rec.Verified, rec.Decision = w.lastRun, w.st.Verify.Verified, d.Label()
		}
		w.records = append(w.records, rec)
		if len(w.records) > recordsKept {
			w.records = w.records[len(w.records)-recordsKept:]
		}
		if d.Kind == loop.Wait && d.Reason == reason.NeedsClarification {
			switch workflow.GetVersion(ctx, versionQuestionWait, workflow.DefaultVersion, 2) {
			case workflow.DefaultVersion:
				return w.end(d.Reason, d.Message), nil
			case 1:
				// The wait of its own, for the resume signal, that
				// workflows started before version 2 are in.
				w.message = d.Message
				answered, err := w.awaitAnswer(ctx, signals, limits, &shared)
				if err != nil {
					return w.end(reason.Interrupted, "cancelled"), err
				}
				if !answered {
					return w.end(d.Reason, d.Message), nil
				}
				// The answer reached the agent through the task file, and
				// started a new run of the loop.
				w.st.Ask = loop.Ask{}
				w.st, _ = loop.Begin(w.st, now(), w.policy)
				continue
			}
			// Version 2: Next decides, as on the local engine — a wait
			// for the answer, which comes with the control signal.
		}
		if d.Kind == loop.Stop {
			return w.end(d.Reason, d.Message), nil
		}
	}
}

// awaitAnswer waits, without a timer, for the answer to the questions the
// last call asked. It reports false when a stop request came first (the
// loop ends, the questions still open, as on the local backend) and an
// error when the workflow was cancelled.
func (w *run) awaitAnswer(ctx workflow.Context, signals, limits workflow.ReceiveChannel, shared *map[string]loop.AgentLimit) (bool, error) {
	w.activity, w.until, w.asked = ActivityQuestion, time.Time{}, w.st.Loop
	defer func() { w.asked, w.message = 0, "" }()
	resume := workflow.GetSignalChannel(ctx, SignalResume)
	for {
		w.publish()
		var r Resume
		got := false
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(resume, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, &r)
			got = r.Asked == w.asked
		})
		sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) {
			var x loop.Control
			c.Receive(ctx, &x)
			w.ctl = x
		})
		sel.AddReceive(limits, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, shared)
		})
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		switch {
		case ctx.Err() != nil:
			return false, temporal.NewCanceledError()
		case got:
			if r.MaxLoops > 0 {
				w.policy.Budget.MaxLoops = r.MaxLoops
			}
			return true, nil
		case w.ctl.Stop:
			return false, nil
		}
	}
}

// run is one workflow run's variables.
type run struct {
	in Input
	// hold is the daemon's hold on new calls (SignalHold; nil: none).
	hold *loop.Hold
	// policy is in.Policy, with the budget an answer grants.
	policy   loop.Policy
	st       loop.State
	ctl      loop.Control
	records  []loop.Metrics
	plan     stop.Plan
	activity string
	until    time.Time
	asked    int
	message  string
	// host and dir are where the session's calls run; snap the tree's
	// last snapshot; adrift that its host stopped answering and no worker
	// has taken the tree over yet.
	host   string
	dir    string
	snap   *Snapshot
	adrift bool
	// after names the git snapshot the last call folded left on its
	// worker (IterateOutput.After), which the next call starts from if it
	// runs there.
	after string
	// lastRun is the verify command's last run (check).
	lastRun *loop.VerifyRun
	// look is versionLook's branch; sight what the last look saw (nil:
	// none yet).
	look  bool
	sight *engine.Sight
	// tell is versionCallStatus's branch; told the last loop whose record
	// a call's input carried.
	tell bool
	told int
	// seq counts the changes of the status the watch update answers with,
	// published the last one; closing says the run is ending.
	seq       int
	published Status
	closing   bool
	// watches counts the watch updates received.
	watches int
	// gated: the calls get the gate (versionGate); calling: one is under
	// way, and items are what it waits on; asks numbers them; grants are
	// the task's "allow for this task" decisions (gate.go).
	gated   bool
	calling bool
	items   []*gateItem
	asks    int
	grants  []gate.Grant
}

// status is the loop as it is now (the query's and the watch's answer).
func (w *run) status() Status {
	return Status{Seq: w.seq, State: w.st, Records: w.records, Activity: w.activity, WaitUntil: w.until,
		Host: w.host, Dir: w.dir, Asked: w.asked, Message: w.message, Pending: w.pending()}
}

// publish counts a change of the status since it was last published: a
// watch waiting for it answers. It runs where the workflow is about to
// block (a call, a wait, a question, the end), so a change and the next
// one a moment later are one answer.
func (w *run) publish() {
	s := w.status()
	s.Seq = w.published.Seq
	if reflect.DeepEqual(s, w.published) {
		return
	}
	w.seq++
	s.Seq, s.Records = w.seq, slices.Clone(s.Records)
	w.published = s
}

func (w *run) end(r reason.Reason, msg string) Output {
	w.activity, w.until = "stopped", time.Time{}
	w.publish()
	out := Output{Reason: r, Message: msg, ExitCode: r.ExitCode(), State: w.st, Records: w.records}
	if w.host != w.in.HostQueue {
		// Only a takeover says where: an unchanged result replays as it
		// was recorded.
		out.Host, out.Dir = w.host, w.dir
	}
	return out
}
