package serve

import (
	"context"
	"errors"
	"time"

	"ralph/internal/engine"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/scarce"
)

// A task's runner: each session's live task (queued, running, waiting,
// halted) has a goroutine of its own that owns it, as Nomad's alloc runner
// owns an allocation. People's commands on the task (Daemon.Do) are
// messages in its mailbox, handled one at a time, and so are the
// scheduler's "start now" and its loop's end; what a command does — the
// store's writes, the task file, a notice, a Temporal RPC — it does on
// that goroutine, holding no lock of the daemon's. A slow RPC therefore
// delays only its own task's next command, never another task's, the
// scheduler or the API's reads. The daemon's lock (d.mu) covers the
// scheduler's bookkeeping only: which runners there are, what each last
// said of its task, which loops run.
//
// A runner takes its task from the store when it starts and again before
// each message, so a restarted daemon rebuilds its runners from SQLite
// (Run) and a write the watchdog made meanwhile is seen. It leaves once its
// task is finished (or the session has none) and no loop runs, or when the
// daemon stops.
type taskRunner struct {
	d       *Daemon
	session string
	mail    chan message  // unbuffered: a sent message is a taken one
	kick    chan struct{} // the scheduler's "start its loop now"
	ended   chan loopEnd  // the loop's end, from its goroutine
	// asked: the loop waits for a person's answer (its saved state says
	// to what); the runner shows the task waiting with the questions.
	asked chan struct{}
	done  chan struct{} // closed once the runner has left

	// Owned by the runner's goroutine.
	t *Task   // the session's latest task; nil: none yet
	w *worker // the running loop, if any
	// cmd marks the session driven while a command is handled, so the
	// watchdog does not settle the task under it (d.workers).
	cmd *worker
	// inCall is the question the running call waits on (taskgate.go);
	// asks numbers them.
	inCall    *inCallAsk
	approvals map[string]*inCallApproval
	asks      int
	// grants are the task's "allow for this task" decisions, their keys
	// (grantsOf names the task): later identical tool calls run without
	// asking.
	grants   []string
	grantsOf string
	// kept are the tool calls a restart ended the call of (taskgatekept.go),
	// of the task keptOf; once are the keys a person allowed once after
	// that, and carry the decisions for the next call's receipt.
	kept   []keptItem
	keptOf string
	once   []string
	carry  []loop.GateDecision

	// What the scheduler knows, under d.mu.
	// pending is what the call waits on, for views (pendingOf), of the
	// task pendingTask.
	pending     []PendingItem
	pendingTask string
	snap        fleet.Task
	live        bool // snap is a task that is not finished
	starting    bool // the scheduler chose it; the runner has not started it yet
}

// message is a command for a runner: do runs on its goroutine.
type message struct {
	do    func(r *taskRunner) outcome
	reply chan outcome // buffered: the runner never waits for the sender
}

// outcome is what a command made of the task. A non-nil wait is closed once
// the task's loop has ended and its end is saved: the sender waits for it
// (bounded) and then reads the task id's view.
type outcome struct {
	v      TaskView
	err    error
	wait   <-chan struct{}
	taskID string
}

// loopEnd is how a task's loop ended.
type loopEnd struct {
	t         Task
	w         *worker
	res       engine.Result
	questions []string
	err       error
}

// errStopping refuses a command that comes while the daemon stops.
var errStopping = errors.New("the daemon is stopping")

// cancelWait bounds how long a cancel waits for its loop to end: the agent
// gets a grace period to stop.
const cancelWait = 15 * time.Second

// runnerFor returns the session's runner, starting one (which takes its
// task from the store) if it has none.
func (d *Daemon) runnerFor(session string, t *Task) (*taskRunner, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r := d.runners[session]; r != nil {
		return r, nil
	}
	select {
	case <-d.quit:
		return nil, errStopping
	default:
	}
	r := &taskRunner{d: d, session: session, mail: make(chan message), kick: make(chan struct{}, 1),
		ended: make(chan loopEnd, 1), asked: make(chan struct{}, 1), done: make(chan struct{}), cmd: &worker{ctl: &controller{}}}
	if t != nil {
		tt := *t
		r.t = &tt
		r.snap, r.live = tt.fleet(), !tt.State.Finished()
	}
	d.runners[session] = r
	d.wg.Add(1)
	go r.run()
	return r, nil
}

// send hands a command to the session's runner and waits for its reply;
// ctx bounds the wait.
func (d *Daemon) send(ctx context.Context, session string, do func(r *taskRunner) outcome) (TaskView, error) {
	m := message{do: do, reply: make(chan outcome, 1)}
	for {
		r, err := d.runnerFor(session, nil)
		if err != nil {
			return TaskView{}, err
		}
		select {
		case r.mail <- m:
		case <-r.done:
			continue // it left as the message came: its successor takes it
		case <-ctx.Done():
			return TaskView{}, ctx.Err()
		}
		var rep outcome
		select {
		case rep = <-m.reply:
		case <-ctx.Done():
			return TaskView{}, ctx.Err()
		}
		if rep.wait == nil || rep.err != nil {
			return rep.v, rep.err
		}
		// A loop ended by a cancel ends within its agent's grace period;
		// the answer shows the task once it has.
		select {
		case <-rep.wait:
		case <-ctx.Done():
		case <-time.After(cancelWait):
		}
		t, err := d.db.Task(rep.taskID)
		if err != nil {
			return TaskView{}, err
		}
		return d.view(t)
	}
}

// run is the runner's goroutine.
func (r *taskRunner) run() {
	defer r.d.wg.Done()
	defer close(r.done)
	quit := r.d.quit
	stopping := false
	for {
		select {
		case m := <-r.mail:
			r.handle(m)
		case <-r.kick:
			r.startLoop()
		case e := <-r.ended:
			r.loopEnded(e)
		case <-r.asked:
			r.waitForAnswer()
		case <-quit:
			quit, stopping = nil, true
		}
		if r.w == nil && (stopping || r.t == nil || r.t.State.Finished()) && r.leave() {
			return
		}
	}
}

// leave takes the runner off the daemon's list, unless the scheduler has
// just chosen its task to start.
func (r *taskRunner) leave() bool {
	d := r.d
	d.mu.Lock()
	if r.starting && r.live {
		d.mu.Unlock()
		return false
	}
	chosen := r.starting
	if d.runners[r.session] == r {
		delete(d.runners, r.session)
	}
	if d.workers[r.session] == r.cmd {
		delete(d.workers, r.session)
	}
	d.mu.Unlock()
	if chosen {
		// Chosen as it finished (a cancel came first): the slot it was
		// given goes to the next in the queue.
		d.schedule()
	}
	return true
}

// handle runs one command on the task as the store has it now.
func (r *taskRunner) handle(m message) {
	r.drive(true)
	r.load()
	rep := m.do(r)
	r.load()
	r.drive(false)
	// A command that queued the task while a slot is free (loop, answer,
	// retry) starts it before it replies, so the reply says "running"
	// as it is, not "queued" for the moment the kick takes.
	r.d.mu.Lock()
	chosen := r.starting
	r.d.mu.Unlock()
	if chosen && rep.err == nil && rep.wait == nil {
		r.startLoop()
		if r.t != nil && r.t.ID == rep.v.ID {
			if v, err := r.d.view(*r.t); err == nil {
				rep.v = v
			}
		}
	}
	m.reply <- rep
}

// load takes the session's latest task from the store and tells the
// scheduler of it.
func (r *taskRunner) load() {
	d := r.d
	t, err := d.db.CurrentTask(r.session)
	switch {
	case errors.Is(err, ErrNoTask):
		r.t = nil
	case err != nil:
		d.logf("[%s] runner: %v", r.session, err)
		return // the last known task stands
	default:
		r.t = &t
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	r.live = r.t != nil && !r.t.State.Finished()
	if r.t != nil {
		r.snap = r.t.fleet()
		if r.snap.State == fleet.Waiting && r.w != nil && (r.inCall != nil || len(r.approvals) > 0) {
			// A call that waits inside itself for a person keeps its
			// agent running, and so its slot: waiting, to people.
			r.snap.State = fleet.Running
		}
	}
}

// drive marks the session as a loop's or a command's (on) or as nobody's:
// the watchdog reads only sessions nobody drives.
func (r *taskRunner) drive(on bool) {
	d := r.d
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case r.w != nil:
		d.workers[r.session] = r.w
	case on:
		d.workers[r.session] = r.cmd
	case d.workers[r.session] == r.cmd:
		delete(d.workers, r.session)
	}
}

// startLoop starts the task's loop if the scheduler chose it and it is
// still queued (a stop may have come first).
func (r *taskRunner) startLoop() {
	d := r.d
	d.mu.Lock()
	chosen, ctx := r.starting, d.ctx
	d.mu.Unlock()
	if !chosen {
		return
	}
	unchoose := func() {
		d.mu.Lock()
		r.starting = false
		d.mu.Unlock()
	}
	if r.w != nil {
		// A loop that waits for an answer it was given while every slot
		// was taken: the slot is its now.
		r.load()
		if r.t != nil && r.t.ID == r.w.taskID && r.t.State == fleet.Queued {
			r.giveAnswer()
		}
		unchoose()
		return
	}
	r.load()
	if r.t == nil || r.t.State != fleet.Queued || ctx == nil || ctx.Err() != nil {
		unchoose()
		d.schedule()
		return
	}
	if st, found, err := d.db.LoadState(r.session); err == nil && found && st.Ask.Waiting() {
		r.keepAnswer(st) // its loop ended before it could take it
	}
	r.takeKept()
	if err := r.launch(ctx, *r.t); err != nil {
		unchoose()
		if scarce.Of(err) != "" {
			// Nothing else may come to schedule again once space is
			// back: try by itself.
			time.AfterFunc(scarce.MaxBackoff, d.schedule)
		}
	}
}

// launch starts the task's loop: the scheduler's choice, marked running,
// or a loop that waits for an answer again (rewait), its task still
// waiting.
func (r *taskRunner) launch(ctx context.Context, t Task) error {
	d := r.d
	if t.State != fleet.Waiting {
		t.State, t.UpdatedAt = fleet.Running, d.opts.Now()
		if err := d.db.UpdateTask(t); err != nil {
			d.logf("task %s: %v", t.ID, err)
			return err
		}
	}
	r.t = &t
	wctx, cancel := context.WithCancel(ctx)
	w := &worker{taskID: t.ID, ctl: &controller{}, cancel: cancel, gone: make(chan struct{}), carry: r.carry, asked: func() {
		select {
		case r.asked <- struct{}{}:
		default: // told already: the runner reads the latest state
		}
	}}
	if by, paused := d.pausedBy(t.ID); paused {
		// Paused before the daemon restarted: it holds again before its
		// first call.
		w.ctl.pause(by)
	}
	r.w, r.carry = w, nil
	d.mu.Lock()
	r.starting = false
	r.snap, r.live = t.fleet(), true
	d.workers[r.session] = w
	d.mu.Unlock()
	if t.State == fleet.Running {
		d.publish(t, "task_running", "")
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer cancel()
		res, questions, err := d.runTask(wctx, t, w)
		r.ended <- loopEnd{t: t, w: w, res: res, questions: questions, err: err}
	}()
	return nil
}

// loopEnded saves how the loop ended and frees its slot.
func (r *taskRunner) loopEnded(e loopEnd) {
	d := r.d
	d.finish(e.t, e.w, e.res, e.questions, e.err)
	if d.ctx.Err() == nil || e.w.cancelled {
		// Ended for good, not by the daemon's stop: its next loop starts
		// unpaused.
		if err := d.db.SetPaused(e.t.ID, ""); err != nil {
			d.logf("task %s: pause: %v", e.t.ID, err)
		}
	}
	r.w, r.once = nil, nil
	r.load()
	r.drive(false)
	d.schedule()
}

// release is the daemon's part of a loop's end: the session is no longer
// its, and whoever waits for it (a cancel) is told.
func (d *Daemon) release(session string, w *worker) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.workers[session] == w {
		delete(d.workers, session)
	}
	select {
	case <-w.gone:
	default:
		close(w.gone)
	}
}

// schedule starts what fleet.Schedule says may start: it chooses under the
// lock, from what the runners last said, and kicks the chosen runners,
// which do the writing.
func (d *Daemon) schedule() {
	d.mu.Lock()
	if d.ctx == nil || d.ctx.Err() != nil {
		d.mu.Unlock()
		return
	}
	var ft []fleet.Task
	byID := map[string]*taskRunner{}
	for _, r := range d.runners {
		if !r.live {
			continue
		}
		f := r.snap
		f.Priority = d.opts.Priorities[f.Session]
		if r.starting {
			f.State = fleet.Running
		}
		ft = append(ft, f)
		byID[f.ID] = r
	}
	var chosen []*taskRunner
	for _, id := range fleet.Schedule(ft, d.opts.MaxParallel) {
		r := byID[id]
		r.starting = true
		chosen = append(chosen, r)
	}
	d.mu.Unlock()
	for _, r := range chosen {
		select {
		case r.kick <- struct{}{}:
		default: // kicked already
		}
	}
}

// restore starts a runner for each live task in the store: those a
// previous daemon left (queued, waiting, halted, or running, which Open
// queued again).
func (d *Daemon) restore() {
	tasks, err := d.db.CurrentTasks()
	if err != nil {
		d.logf("restore: %v", err)
		return
	}
	for _, t := range tasks {
		if t.State.Finished() {
			continue
		}
		if _, err := d.runnerFor(t.Session, &t); err != nil {
			return
		}
		d.restoreKept(t)
		if waitsForAnswer(t) {
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				_, _ = d.send(d.ctx, t.Session, func(r *taskRunner) outcome { r.rewait(); return outcome{} })
			}()
		}
		if !d.keepsGateItems() && waitsInCall(t) {
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				_, _ = d.send(d.ctx, t.Session, func(r *taskRunner) outcome { r.rejoin(); return outcome{} })
			}()
		}
	}
}

// stopRunners tells the runners to leave once their loops have ended; no
// new one starts.
func (d *Daemon) stopRunners() {
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-d.quit:
	default:
		close(d.quit)
	}
}
