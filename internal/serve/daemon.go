// Package serve is `ralph serve`: one daemon hosting many loops. Sessions
// (named git workspaces) run at most one task each; a task's loop is an
// engine.Engine in a goroutine whose state lives in SQLite under
// RALPH_HOME; the decisions about tasks are internal/fleet's. The HTTP API
// (api.go) and the `ralph task` client drive it.
package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"ralph/internal/account"
	"ralph/internal/agent"
	"ralph/internal/budget"
	"ralph/internal/engine"
	"ralph/internal/events"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/metrics"
	"ralph/internal/reason"
	"ralph/internal/redact"
	"ralph/internal/store"
	"ralph/internal/tracing"
)

// DefaultMaxLoops is `ralph task loop SESSION` without MAX.
const DefaultMaxLoops = 100

// Options configure a daemon.
type Options struct {
	Home Home
	// Sessions are registered (or moved) at start; sessions registered
	// before stay known.
	Sessions    []Session
	MaxParallel int
	// Build resolves a session directory's loop exactly as `ralph run`
	// would (its .ralphrc and RALPH_<KEY> environment), writing warnings
	// to warn.
	Build func(dir string, warn io.Writer) (loop.Spec, []agent.Adapter, error)
	// Confined reports whether a session's agents must run in the sandbox
	// (a request's worktree, people outside the machine wrote its prompt);
	// a Runner passes it on to where the agents run. nil: none must.
	Confined func(dir string) bool
	// Log receives the daemon's log lines.
	Log io.Writer
	// Describe renders an engine event as a log line ("" skips it).
	Describe func(loop.Event) string
	// Notifier hears of what people must know (done, halted, a question,
	// a usage-limit wait, a stopped loop), besides the log.
	Notifier Notifier
	// Routes are handlers served outside the API's token on the same
	// listener: webhooks, which their own signatures authenticate.
	Routes map[string]http.Handler
	// MaxConns is the HTTP server's connection limit (0: httpcap's
	// default); over it the least useful connection is shed.
	MaxConns int
	Now      func() time.Time
	// Watch configures the watchdog of the tasks no loop works on.
	Watch WatchOptions
	// Runner runs the loops elsewhere (the Temporal backend); nil: here.
	Runner Runner
	// Tracer exports the loops' traces (nil: off).
	Tracer *tracing.Tracer
	// Prompt, when set, may replace the prompt of a session's task (ok
	// true): requests from GitHub and Slack tell their agent more than a
	// title. It is asked each time the task's loop starts.
	Prompt func(session, title, taskFile string) (string, bool)
	// Budget is the fleet's daily budgets and their zone (budget.go);
	// none set: every call is admitted.
	Budget budget.Config
	// Accounts are the agents' accounts (accounts.go); Getenv reads the
	// variables holding their keys (nil: os.Getenv).
	Accounts []account.Account
	Getenv   func(string) string
	// Priorities are the sessions' (RALPH_SESSION_PRIORITIES): a queued
	// task of a higher one starts first.
	Priorities map[string]int
	// HistoryDays is how long a finished task is kept (HISTORY_DAYS; the
	// command line's default is DefaultHistoryDays); 0 keeps every task.
	HistoryDays int
	// LockFile is the run lock `ralph run` takes in a session's directory
	// (its .ralphrc may move the state directory); nil: DIR/.ralph/ralph.lock.
	// A loop of the local backend holds it while it runs.
	LockFile func(dir string) string
}

// Daemon hosts the loops.
type Daemon struct {
	opts Options
	db   *DB
	lock *store.Lock
	hub  *hub
	// bus carries every task's events, its loops' included, in order, to
	// the log and the notices (logEvent) and the stream clients (stream).
	bus *events.Bus[Event]
	// turns bound the loops working at once (engine.Turns).
	turns *engine.Turns
	logw  *syncWriter
	// outbox delivers the notices to each channel (outbox.go).
	outbox *outbox
	// metrics are what GET /metrics serves (metrics.go).
	metrics *metrics.Metrics

	// mu covers the scheduler's bookkeeping, in memory only: never held
	// across a write, a file's rename, a notice or an RPC (taskrunner.go).
	mu      sync.Mutex
	ctx     context.Context
	runners map[string]*taskRunner // by session: its live task's runner
	workers map[string]*worker     // by session: the loop (or command) driving it
	quit    chan struct{}          // closed when the daemon stops: runners leave
	wg      sync.WaitGroup

	actMu    sync.Mutex
	activity map[string]store.Status // the engine's last status, by session
	// quota are the accounts' usage windows (accounts.go).
	quota quota
	list  listView

	// budMu covers bud, the admission's count of calls (budget.go).
	budMu sync.Mutex
	bud   budgets

	watch watchBoard
	web   http.Handler // the dashboard, mounted at / (SetWeb)
}

type worker struct {
	taskID    string
	ctl       *controller
	cancel    context.CancelFunc
	cancelled bool
	// gone is closed when the worker leaves the session, so a cancel
	// waits for it without polling.
	gone chan struct{}
	// asked tells the task's runner the loop waits for an answer.
	asked func()
	// carry are decisions made while no call ran, for the first call's
	// receipt (taskgatekept.go).
	carry []loop.GateDecision
}

// loopEvent publishes a loop's event and tells the task's runner of a
// wait for a person's answer, on either backend.
func (d *Daemon) loopEvent(t Task, w *worker, ev loop.Event) {
	d.emit(t, ev)
	if ev.Type == loop.EventWait && ev.WaitKind == loop.WaitAnswer && w.asked != nil {
		w.asked()
	}
}

// Open prepares the daemon: RALPH_HOME, its lock, the store, the sessions;
// tasks a dead daemon left running go back to the queue.
func Open(opts Options) (*Daemon, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Describe == nil {
		opts.Describe = func(ev loop.Event) string { return ev.Message }
	}
	opts.Watch = opts.Watch.withDefaults()
	home := string(opts.Home)
	for _, d := range []string{home, filepath.Join(home, "handoffs", "archive"), filepath.Join(home, "logs"), filepath.Join(home, "prompts")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	lock, err := store.AcquireLock(opts.Home.LockFile())
	if err != nil {
		return nil, fmt.Errorf("RALPH_HOME %s: %w", home, err)
	}
	d := &Daemon{opts: opts, lock: lock, hub: newHub(), runners: map[string]*taskRunner{}, workers: map[string]*worker{},
		quit: make(chan struct{}), activity: map[string]store.Status{},
		logw: &syncWriter{w: opts.Log}, bud: budgets{running: map[string]int{}, warned: map[string]bool{}, snapCost: map[string]float64{}}}
	if d.db, err = OpenDB(opts.Home.DB()); err != nil {
		lock.Release()
		return nil, err
	}
	fail := func(err error) (*Daemon, error) { d.Close(); return nil, err }
	d.list.kick = make(chan struct{}, 1)
	// One P is left to the API and the rest of the daemon: with every P
	// busy with loops, a request waited behind them (docs/serve.md, "Turns").
	d.turns = engine.NewTurns(runtime.GOMAXPROCS(0) - 1)
	d.db.cache.onChange = d.list.changedView
	d.openOutbox()
	if err := d.openQuota(); err != nil {
		return fail(err)
	}
	d.bus = events.Of(lostEvents)
	d.bus.Subscribe(d.logEvent, 0)
	d.bus.Subscribe(d.stream, 0)
	d.openMetrics()

	d.sweepTemps(opts.Now())
	for _, s := range opts.Sessions {
		if err := checkRepo(s); err != nil {
			return fail(err)
		}
		if err := d.db.PutSession(s); err != nil {
			return fail(err)
		}
	}
	if err := d.endAgentGroups(); err != nil {
		return fail(err)
	}
	n, err := d.db.Requeue()
	if err != nil {
		return fail(err)
	}
	if n > 0 {
		d.logf("resuming %d task(s) left running by the previous daemon", n)
	}
	return d, nil
}

// endAgentGroups ends the agent process groups a dead daemon left: the
// agents got SIGTERM when it died, but tools they started may live on.
func (d *Daemon) endAgentGroups() error {
	groups, err := d.db.AgentGroups()
	if err != nil {
		return err
	}
	for _, g := range groups {
		if endGroup(g.PGID, g.Start) {
			d.logf("[%s] ended agent process group %d left by the previous daemon", g.Session, g.PGID)
		}
		if err := d.db.SetAgentGroup(g.Session, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the store and RALPH_HOME. Run must have returned.
func (d *Daemon) Close() error {
	// Runners of a daemon that never ran (tests) leave now; those of one
	// that ran have left.
	d.stopRunners()
	d.wg.Wait()
	if d.bus != nil {
		// What the loops said is logged and noticed before the notices'
		// channels close.
		d.bus.Close(5 * time.Second)
	}
	if d.outbox != nil {
		d.outbox.close(5 * time.Second)
	}
	var err error
	if d.db != nil {
		err = d.db.Close()
	}
	d.lock.Release()
	return err
}

// Run starts the queued tasks and keeps scheduling, and the watchdog
// watching, until ctx ends; then it waits for the loops to stop. Their tasks stay running in the store, so
// the next daemon resumes them.
func (d *Daemon) Run(ctx context.Context) {
	d.mu.Lock()
	d.ctx = ctx
	d.mu.Unlock()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		if engine.SleepContext(ctx, homeTempAge) == nil {
			d.sweepTemps(d.opts.Now())
		}
	}()
	if d.opts.HistoryDays > 0 {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.pruneLoop(ctx.Done(), historyPruneEvery)
		}()
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.keepList(ctx)
	}()
	if d.opts.Watch.Interval > 0 {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.watchLoop(ctx)
		}()
	}
	// Each live task in the store gets its runner back, then the queue
	// starts.
	d.restore()
	d.schedule()
	<-ctx.Done()
	// The loops end with ctx; each runner saves its loop's end and
	// leaves, and none starts after this.
	d.stopRunners()
	d.wg.Wait()
}

func (d *Daemon) logf(format string, a ...any) {
	fmt.Fprintf(d.logw, "%s %s\n", d.opts.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, a...))
}

// loopTask runs the engine on the task's session until it stops.
func (d *Daemon) loopTask(ctx context.Context, t Task, w *worker) (engine.Result, []string, error) {
	sess, err := d.session(t.Session)
	if err != nil {
		return engine.Result{}, nil, err
	}
	warn := &prefixWriter{w: d.logw, prefix: "[" + t.Session + "] "}
	spec, ads, err := d.opts.Build(sess.Dir, warn)
	if err != nil {
		return engine.Result{}, nil, err
	}
	st, _, err := d.db.LoadState(t.Session)
	if err != nil {
		return engine.Result{}, nil, err
	}
	// The task's budget counts its own iterations, so a restarted daemon
	// grants only what is left.
	left := t.budget().Left(st.Loop)
	if left <= 0 && st.Ask.Waiting() {
		// Asked by the task's last loop: the wait for the answer runs,
		// and the answer brings the loops it grants (loop.Control).
		left = 1
	}
	if left <= 0 {
		return engine.Result{Reason: reason.MaxLoops, Message: fmt.Sprintf("reached the task's %d loops", t.MaxLoops), ExitCode: reason.MaxLoops.ExitCode()}, nil, nil
	}
	spec.Dir = sess.Dir
	spec.Policy.Budget.MaxLoops = left
	// The dashboard shows the agent's work as it streams, as the monitor
	// does for `ralph run`: the engine then emits it as live events.
	spec.Live = true
	// A person can answer here: a question is a wait for the answer
	// (`ralph task answer`), in the same run.
	spec.Policy.Answerable = true
	if d.opts.Runner == nil {
		// One tree, one loop: while this loop runs, a `ralph run` there
		// (or another daemon's loop) refuses, and one running there now
		// makes this task wait.
		lock, err := d.lockTree(t, sess.Dir)
		if err != nil {
			return engine.Result{}, nil, err
		}
		defer lock.Release()
	}
	ws := &workspace{home: d.opts.Home, db: d.db, session: sess, taskID: t.ID, onStatus: func(s store.Status) {
		d.actMu.Lock()
		prev, had := d.activity[t.Session]
		d.activity[t.Session] = s
		d.actMu.Unlock()
		if !had || !sameShown(prev, s) {
			d.db.cache.touch(t.Session)
		}
	}, onSave: func(st loop.State) { d.shareLimits(t.Session, st.AgentLimits) }}
	agents := spec.AgentNames()
	if err := ws.EnsureDirs(); err != nil {
		return engine.Result{}, nil, err
	}
	var answers string
	if data, err := readTaskFile(t.File); err == nil {
		answers = answersOf(data)
	}
	text := prompt(t.Title, t.File, projectPrompt(sess.Dir), answers)
	if d.opts.Prompt != nil {
		if p, ok := d.opts.Prompt(t.Session, t.Title, t.File); ok {
			text = p
		}
	}
	text = redact.Values(text)
	if err := store.WriteFileAtomic(ws.PromptFile(), []byte(text), 0o644); err != nil {
		return engine.Result{}, nil, err
	}
	if err := checkTaskFile(t, d.opts.Now()); err != nil {
		return engine.Result{}, nil, err
	}
	if t.State != fleet.Waiting { // a loop waiting for an answer again (rewait) leaves it WAITING
		if err := rewriteTaskFile(t.File, "IN_PROGRESS", nil); err != nil {
			return engine.Result{}, nil, fmt.Errorf("task file: %w", err)
		}
	}
	if d.opts.Runner != nil {
		return d.runElsewhere(ctx, t, w, ws, spec, st, text)
	}
	run := d.traceRun(t, spec, "local")
	defer run.End()
	deps := engine.Deps{Agents: ads, Store: ws, CallEnv: run.CallEnv, Now: d.opts.Now,
		Admit: func() engine.Admission { return d.admit(t.Session) }, Turns: d.turns,
		Control: w.ctl, Emit: func(ev loop.Event) { run.Observe(ev); d.loopEvent(t, w, ev) },
		SharedLimits: func() map[string]loop.AgentLimit { l, _ := d.sharedLimits(t.Session, agents, true); return l },
		Quota:        func() map[string]bool { _, q := d.sharedLimits(t.Session, agents, true); return q },
		AccountEnv:   func(agent string) ([]string, string) { return d.accountEnv(t.Session, agent) },
		AgentStarted: func(pgid int) {
			if start, err := procStart(pgid); err == nil {
				if err := d.db.SetAgentGroup(t.Session, pgid, start); err != nil {
					d.logf("[%s] record agent process group: %v", t.Session, err)
				}
			}
		}}
	if g, tg := d.gateFor(t.Session, spec.ApprovalTimeout, w.carry); g != nil {
		deps.Gate, deps.Decisions = g, tg.take
	}
	eng := engine.New(spec, deps)
	res, err := eng.Run(ctx)
	// The runner has reaped the agent's group by now. After a kill -9 this
	// never runs, and the next daemon ends the recorded group.
	if err := d.db.SetAgentGroup(t.Session, 0, 0); err != nil {
		d.logf("[%s] agent process group: %v", t.Session, err)
	}
	// The loop's last events are logged before the task's end is.
	d.bus.Flush(5 * time.Second)
	return res, openQuestions(res, eng.State()), err
}

// openQuestions are the questions a loop that ended leaves open: those it
// ended on, or those whose answer it was waiting for when it was stopped.
func openQuestions(res engine.Result, st loop.State) []string {
	switch {
	case st.Ask.Waiting():
		return asked(st.Ask)
	case res.Reason == reason.NeedsClarification:
		return st.Last.Questions
	}
	return nil
}

// asked are a question's lines as the task shows them: an agent that asked
// without a question in words still gets an answer.
func asked(a loop.Ask) []string {
	if len(a.Questions) == 0 {
		return []string{"(the agent asked for clarification without a question in words: say how it should go on)"}
	}
	return a.Questions
}

// emit puts a loop's event on the daemon's bus, with its task.
func (d *Daemon) emit(t Task, ev loop.Event) {
	d.bus.Publish(Event{Type: ev.Type, At: ev.At, Session: t.Session, TaskID: t.ID, Loop: ev.Loop, Engine: &ev})
}

// logEvent is the bus's observer for the log and the notices: it logs a
// loop's event and notifies what people must know of it (a task's own
// changes are logged and noticed where they are made).
func (d *Daemon) logEvent(e Event) {
	ev := e.Engine
	if ev == nil || ev.Type == loop.EventLive {
		// Live output is streamed (the dashboard shows it), never logged:
		// the iteration's own log keeps the agent's output.
		return
	}
	if line := d.opts.Describe(*ev); line != "" {
		fmt.Fprintf(d.logw, "%s [%s] %s\n", ev.At.UTC().Format(time.RFC3339), e.Session, store.Redact(line))
	}
	if ev.Type == loop.EventWait && ev.WaitKind == loop.WaitUsageLimit {
		t, err := d.db.Task(e.TaskID)
		if err != nil {
			d.logf("[%s] usage-limit notice: %v", e.Session, err)
			return
		}
		msg := ev.Message
		if !strings.HasPrefix(msg, "waiting for quota on ") { // the loop's own limit, in the agent's words
			msg = d.quotaText(t.Session, ev.Until) + " — " + msg
		}
		d.noticeWait(t, NoticeUsageLimit, msg, ev.Until)
	}
	if ev.Type == loop.EventWait && ev.WaitKind == loop.WaitBudget && !ev.Until.IsZero() {
		// A spent budget, not a moment's wait for the calls running.
		t, err := d.db.Task(e.TaskID)
		if err != nil {
			d.logf("[%s] budget notice: %v", e.Session, err)
			return
		}
		d.noticeWait(t, NoticeBudgetWait, ev.Message, ev.Until)
	}
}

// stream is the bus's observer for the API's event stream and the
// dashboard: a loop's event carries its log line as the message.
func (d *Daemon) stream(e Event) {
	if ev := e.Engine; ev != nil && ev.Type != loop.EventLive {
		e.Message = store.Redact(d.opts.Describe(*ev))
	}
	d.hub.publish(e)
}
