// Package daemon is the Temporal backend's side in `ralph serve`: it
// starts each task's workflow (package temporal), follows its history into
// the daemon's store, and passes the daemon's requests on as signals and
// the gate's decisions as updates. It runs no workflow code and no agent.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"ralph/internal/engine"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/serve"
	"ralph/internal/store"
	wf "ralph/internal/temporal"
)

// Runner is serve.Runner on Temporal: `ralph serve --backend temporal`
// starts each task's workflow, forwards requests to it as signals and
// writes what the workflow tells it (its status, asked after each of its
// decisions) into the daemon's store, so that `ralph task` and every view
// work as on the local backend.
type Runner struct {
	Client client.Client
	// Namespace is the client's ("" for "default").
	Namespace string
	Queue     string
	// Pins are the host queues of sessions (session → queue): their agent
	// calls run only on the workers polling that queue.
	Pins map[string]string
	// Heartbeat is the iterations' heartbeat timeout (0: DefaultHeartbeat).
	Heartbeat time.Duration
	// Handover, when set, publishes the working trees of pinned sessions
	// after every call, for a takeover when their host stops answering.
	Handover *wf.Handover
	// Poll is how often the runner looks at the daemon's requests for
	// the task (0: 500ms), in memory: a changed one goes out as a signal.
	Poll time.Duration
	// Settle is how long the runner lets a pending decision be made before
	// it reads the workflow's history again (0: DefaultSettle).
	Settle time.Duration
	Log    io.Writer

	mu sync.Mutex
	// resumed is, by task, the loop whose questions Resume answered: a
	// RunLoop that sees them still open before the workflow has taken the
	// signal must not report them again.
	resumed map[string]int
}

// RunLoop runs the task's workflow until it ends. A workflow of the task
// LoopsOutliveTheDaemon: a workflow and its calls go on without the
// daemon, so the daemon keeps no gate items of its own for them.
func (r *Runner) LoopsOutliveTheDaemon() bool { return true }

var _ serve.LoopsOutliver = (*Runner)(nil)

// already running (the daemon restarted) is joined, not started again.
func (r *Runner) RunLoop(ctx context.Context, in serve.RunIn) (engine.Result, loop.State, error) {
	queue := r.Queue
	if queue == "" {
		queue = wf.DefaultQueue
	}
	poll := r.Poll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	id := wf.WorkflowID(in.TaskID)
	policy := in.Spec.Policy
	if in.Spec.Verifier == nil {
		// No verify command in the daemon's reading of the tree: a gate
		// with nothing to run would accept no completion ever.
		policy.Verify = loop.VerifyPolicy{}
	}
	ctl, held := control(in.Control), hold(in)
	run, started, err := r.start(ctx, id, queue, wf.Input{TaskID: in.TaskID, Session: in.Session, Dir: in.Dir, TaskFile: in.TaskFile, Prompt: in.Prompt,
		Policy: policy, Timeout: in.Spec.Timeout, Heartbeat: r.Heartbeat, State: in.State, HostQueue: r.Pins[in.Session], Handover: r.handover(in.Session), Confined: in.Confined,
		Sight: &in.Sight, Control: ctl, Hold: held, Accounts: in.Accounts, Gate: in.Gate != nil})
	if err != nil {
		return engine.Result{ExitCode: 1}, in.State, fmt.Errorf("start workflow %s: %w", id, err)
	}
	m := &mirror{in: in, last: in.State.Loop, st: in.State, host: r.Pins[in.Session]}
	var gs *gateSync
	if in.Gate != nil {
		gs = newGateSync(r.Client, id, in.Gate, r.Log)
	}
	done := make(chan struct{})
	var out wf.Output
	var runErr error
	// Not ctx: the daemon stopping must not look like the workflow
	// failing. Cancelled when RunLoop returns while the workflow goes on
	// (it waits for a person, or the daemon stops).
	gctx, stopGet := context.WithCancel(context.Background())
	defer stopGet()
	go func() {
		defer close(done)
		runErr = r.result(gctx, in.TaskID, id, run, &out)
	}()
	statuses := make(chan wf.Status)
	go r.watch(gctx, id, statuses, done)
	t := time.NewTicker(poll)
	defer t.Stop()
	// A run this call started has the request and the hold in its input:
	// signalling them again would cost the server a write and the
	// workflow a decision each. A run it joined (the daemon restarted, or
	// the loop lived through a question) may hold older ones: they are
	// sent at the first tick whatever they are.
	sent, sentOnce := ctl, started
	var sentLimits map[string]loop.AgentLimit
	sentHold, holdSent := held, started
	var asked time.Time
	for {
		select {
		case <-done:
			gs.stop()
			return m.finish(out, runErr)
		case <-ctx.Done():
			select {
			case <-in.Shutdown:
				// The workflow goes on; the next daemon joins it.
				return engine.Result{Reason: reason.Interrupted, ExitCode: reason.Interrupted.ExitCode()}, m.st, nil
			default:
			}
			gs.stop()
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			// The latest run: the one a long loop continued as.
			err := r.Client.CancelWorkflow(cctx, id, "")
			cancel()
			if err != nil {
				return engine.Result{ExitCode: 1}, m.st, fmt.Errorf("cancel workflow %s: %w", id, err)
			}
			select {
			case <-done:
				return m.finish(out, runErr)
			case <-time.After(30 * time.Second):
				return engine.Result{Reason: reason.Interrupted, ExitCode: reason.Interrupted.ExitCode()}, m.st, nil
			}
		case s := <-statuses:
			m.update(s)
			gs.sync(s.Pending)
			if sent.ResetID != "" && s.State.ResetID == sent.ResetID {
				_ = in.Control.ClearReset(sent.ResetID)
			}
			if a := s.State.Ask; sent.AnswerTo != 0 && (a.Loop != sent.AnswerTo || !a.Waiting()) {
				// The workflow's state holds the answer now.
				if c, ok := in.Control.(interface{ ClearAnswer(to int) error }); ok {
					_ = c.ClearAnswer(sent.AnswerTo)
				}
			}
			if s.Activity == wf.ActivityQuestion && s.Asked > r.answered(in.TaskID) {
				// The workflow waits for a person; the daemon's task
				// does too, until Resume.
				gs.stop()
				return m.question(s)
			}
		case <-t.C:
			// The first time whatever the request: a workflow that lived
			// through a question or a daemon restart may hold an older one.
			// The latest run (""): the one a long loop continued as.
			ctl := control(in.Control)
			if ctl != sent || !sentOnce {
				if err := r.Client.SignalWorkflow(ctx, id, "", wf.SignalControl, ctl); err == nil {
					sent, sentOnce = ctl, true
				}
			}
			// The first time whatever the hold: a workflow a restarted
			// daemon joins may hold an older one.
			if h := hold(in); !holdSent || !sameHold(h, sentHold) {
				if err := r.Client.SignalWorkflow(ctx, id, "", wf.SignalHold, h); err == nil {
					sentHold, holdSent = h, true
				}
			}
			if len(in.Accounts) > 0 && time.Since(asked) >= workerGrace {
				// The call may wait for a worker with its account.
				asked = time.Now()
				name := ""
				if m.activity == "executing" && r.unstarted(ctx, id) {
					name = heldAccount(in.Accounts, m.st, in.Spec.Policy.Agents)
				}
				m.noWorker(name)
			}
			if in.SharedLimits != nil {
				if l := in.SharedLimits(); !maps.EqualFunc(l, sentLimits, sameLimit) {
					if err := r.Client.SignalWorkflow(ctx, id, "", wf.SignalLimits, l); err == nil {
						sentLimits = l
					}
				}
			}
		}
	}
}

// watch follows the task's workflow: after each decision it asks for the
// status, and passes it on when it has changed since the last one (a call
// begun or folded, a wait, a question, the end), so the daemon learns of a
// change as it happens and asks nothing in between (follow). Its latest
// run: the one a long loop continued as. It ends with ctx or the workflow.
func (r *Runner) watch(ctx context.Context, id string, out chan<- wf.Status, done <-chan struct{}) {
	after := 0
	tell := func(s wf.Status) {
		if s.Seq <= after {
			return
		}
		after = s.Seq
		select {
		case out <- s:
		case <-ctx.Done():
		}
	}
	changed := func() {
		v, err := r.Client.QueryWorkflow(ctx, id, "", wf.QueryStatus)
		var s wf.Status
		if err == nil {
			err = v.Get(&s)
		}
		if err == nil {
			tell(s)
		}
	}
	for ctx.Err() == nil {
		continued, err := r.follow(ctx, id, changed, tell)
		if continued {
			continue
		}
		if err == nil {
			// The run is over: its Output tells the rest.
			select {
			case <-ctx.Done():
			case <-done:
			}
			return
		}
		// The service is away for a moment.
		select {
		case <-ctx.Done():
		case <-done:
			return
		case <-time.After(time.Second):
		}
	}
}

// Resume implements serve.Resumer: the task's workflow, waiting for the
// answer to its questions, goes on with a budget of maxLoops. A workflow
// that is not waiting for one (it ended, or never asked) is left alone:
// the daemon's next RunLoop starts or joins it.
func (r *Runner) Resume(ctx context.Context, taskID string, maxLoops int, by string) error {
	id := wf.WorkflowID(taskID)
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := r.Client.QueryWorkflow(qctx, id, "", wf.QueryStatus)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil
		}
		return fmt.Errorf("workflow %s: %w", id, err)
	}
	var s wf.Status
	if err := v.Get(&s); err != nil {
		return fmt.Errorf("workflow %s: %w", id, err)
	}
	if s.Activity != wf.ActivityQuestion {
		return nil
	}
	if err := r.Client.SignalWorkflow(qctx, id, "", wf.SignalResume, wf.Resume{Asked: s.Asked, MaxLoops: maxLoops, By: by}); err != nil {
		return fmt.Errorf("resume workflow %s: %w", id, err)
	}
	r.mu.Lock()
	if r.resumed == nil {
		r.resumed = map[string]int{}
	}
	r.resumed[taskID] = s.Asked
	r.mu.Unlock()
	return nil
}

// Forget implements serve.Resumer: a task given up while its workflow
// waits for a person ends the workflow too.
func (r *Runner) Forget(ctx context.Context, taskID string) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := r.Client.CancelWorkflow(cctx, wf.WorkflowID(taskID), "")
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) {
		return fmt.Errorf("cancel workflow %s: %w", wf.WorkflowID(taskID), err)
	}
	r.mu.Lock()
	delete(r.resumed, taskID)
	r.mu.Unlock()
	return nil
}

func (r *Runner) answered(taskID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resumed[taskID]
}

// handover is the session's Handover: pinned sessions only, as an
// unpinned one's tree is already any worker's.
func (r *Runner) handover(session string) *wf.Handover {
	if r.Handover == nil || r.Pins[session] == "" {
		return nil
	}
	h := *r.Handover
	return &h
}

// hold is the daemon's hold on the task's next call (nil: none).
func hold(in serve.RunIn) *loop.Hold {
	if in.Hold == nil {
		return nil
	}
	return in.Hold()
}

func sameHold(a, b *loop.Hold) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || !a.Until.Equal(b.Until) || a.Message != b.Message || (a.Allowance == nil) != (b.Allowance == nil) {
		return false
	}
	return a.Allowance == nil || *a.Allowance == *b.Allowance
}

func sameLimit(a, b loop.AgentLimit) bool { return a.Until.Equal(b.Until) && a.Message == b.Message }

// control is the request as loop.Control (what engine.request reads); a
// session reset is the local engine's alone.
func control(c engine.Controller) loop.Control {
	if c == nil {
		return loop.Control{}
	}
	r, _ := c.Read()
	ctl := engine.Control(r)
	ctl.ResetSession = false
	return ctl
}

// mirror copies the workflow's progress into the daemon's store: each new
// iteration record once, in order, with the latest state.
type mirror struct {
	in   serve.RunIn
	last int // the last loop recorded
	st   loop.State
	// waiting is the wait last announced.
	waiting string
	until   time.Time
	// host is the queue the session's calls go to, as last announced.
	host string
	// activity is the workflow's, as last told; account the one whose
	// worker the call is shown waiting for ("": none).
	activity string
	account  string
}

func (m *mirror) emit(ev loop.Event) {
	if m.in.Emit != nil {
		ev.At = time.Now()
		m.in.Emit(ev)
	}
}

func (m *mirror) update(s wf.Status) {
	m.records(s.State, s.Records)
	m.moved(s.Host, s.Dir, s.State.Loop)
	m.activity, m.account = s.Activity, ""
	kind, waiting := strings.CutPrefix(s.Activity, "waiting: ")
	// A budget's wait is the daemon's own hold: its reason is the
	// daemon's to tell, on every surface as on the local backend.
	var held *loop.Hold
	if waiting && kind == loop.WaitBudget {
		held = hold(m.in)
	}
	if waiting {
		if kind != m.waiting || !s.WaitUntil.Equal(m.until) {
			msg := fmt.Sprintf("waiting (%s) until %s", kind, s.WaitUntil.UTC().Format(time.RFC3339))
			if held != nil {
				msg = held.Message
			}
			m.emit(loop.Event{Type: loop.EventWait, Loop: s.State.Loop, WaitKind: kind, Until: s.WaitUntil, Message: msg})
		}
		m.waiting, m.until = kind, s.WaitUntil
	} else {
		m.waiting, m.until = "", time.Time{}
	}
	st := store.Status{LastAction: s.Activity, LoopCount: s.State.Loop, Agent: s.State.Agent}
	switch {
	case held != nil:
		st.Wait = &store.Wait{Kind: loop.WaitBudget, Until: s.WaitUntil, Reason: held.Message}
	case !s.WaitUntil.IsZero():
		st.Wait = &store.Wait{Kind: s.Activity, Until: s.WaitUntil}
	}
	if m.in.Status != nil {
		m.in.Status(st)
	}
}

// moved announces a takeover: the session's calls run on host now.
func (m *mirror) moved(host, dir string, loopN int) {
	if host == "" || host == m.host {
		return
	}
	m.emit(loop.Event{Type: loop.EventWarning, Loop: loopN,
		Message: fmt.Sprintf("the session's tree was taken over: its calls run on %s now, in %s (%s stopped answering)", host, dir, m.host)})
	m.host = host
}

func (m *mirror) records(st loop.State, recs []loop.Metrics) {
	saved := false
	for i := range recs {
		if recs[i].Loop <= m.last {
			continue
		}
		rec := recs[i]
		if err := m.in.Save(st, &rec); err != nil {
			return
		}
		m.last, saved = rec.Loop, true
		rec = rec.Lean()
		m.emit(loop.Event{Type: loop.EventIterationEnd, Loop: rec.Loop, Agent: rec.Agent, Iteration: &rec})
	}
	if !saved && st.Loop == m.st.Loop && st.Breaker.Status == m.st.Breaker.Status && st.ResetID == m.st.ResetID {
		return
	}
	if !saved {
		_ = m.in.Save(st, nil)
	}
	m.st = st
}

// question ends the daemon's side of the loop while the workflow waits for
// the answer: the task waits with the questions, as on the local backend.
func (m *mirror) question(s wf.Status) (engine.Result, loop.State, error) {
	m.records(s.State, s.Records)
	if err := m.in.Save(s.State, nil); err != nil {
		return engine.Result{ExitCode: 1}, s.State, err
	}
	return engine.Result{Reason: reason.NeedsClarification, Message: s.Message, ExitCode: reason.NeedsClarification.ExitCode(), Loops: s.State.Loop}, s.State, nil
}

func (m *mirror) finish(out wf.Output, err error) (engine.Result, loop.State, error) {
	if m.in.Control != nil {
		// A stop is obeyed once, as the engine clears it when it ends.
		_ = m.in.Control.ClearStop()
	}
	var canceled *temporal.CanceledError
	switch {
	case errors.As(err, &canceled):
		return engine.Result{Reason: reason.Interrupted, Message: "cancelled", ExitCode: reason.Interrupted.ExitCode(), Loops: m.st.Loop}, m.st, nil
	case err != nil:
		return engine.Result{ExitCode: 1, Loops: m.st.Loop}, m.st, err
	}
	m.moved(out.Host, out.Dir, out.State.Loop)
	m.records(out.State, out.Records)
	if err := m.in.Save(out.State, nil); err != nil {
		return engine.Result{ExitCode: 1}, out.State, err
	}
	return engine.Result{Reason: out.Reason, Message: out.Message, ExitCode: out.ExitCode, Loops: out.State.Loop}, out.State, nil
}
