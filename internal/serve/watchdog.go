package serve

// The watchdog: `ralph task start` without `loop` leaves the task to a
// person and an interactive agent running in tmux. Every few seconds the
// watchdog reads that agent's screen and keeps the task current from it: a
// record per status block, the breaker, the task file's status section,
// and the end of the task on EXIT_SIGNAL: true or a ticked checklist. It
// only reads: nothing is ever typed into a pane, and a session a loop
// worker drives is left to the loop.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/gitx"
	"ralph/internal/loop"
	"ralph/internal/taskfile"
	"ralph/internal/watchdog"
)

const (
	// DefaultWatchTarget names a session's tmux session.
	DefaultWatchTarget = "claude-{session}"
	// DefaultWatchInterval is the time between two looks at a screen.
	DefaultWatchInterval = 3 * time.Second
	// watchAgent is the agent of the records the watchdog makes.
	watchAgent = loop.WatchAgent
)

// WatchOptions configure the watchdog.
type WatchOptions struct {
	// Target is a session's tmux target; {session} stands for its name.
	Target string
	// Interval is the time between looks: 0 is DefaultWatchInterval, a
	// negative one turns the watchdog off.
	Interval time.Duration
	// Screens reads the panes; nil is tmux (on PATH) with Socket.
	Screens Screens
	// Socket is the tmux server's socket (tmux -S); "" is the default one.
	Socket string
}

// Screens is what the watchdog needs of tmux.
type Screens interface {
	Exists(ctx context.Context, target string) (bool, error)
	Capture(ctx context.Context, target string) (string, error)
}

func (o WatchOptions) withDefaults() WatchOptions {
	if o.Interval == 0 {
		o.Interval = DefaultWatchInterval
	}
	if o.Screens == nil {
		o.Screens = watchdog.Tmux{Socket: o.Socket}
	}
	return o
}

// target is the tmux target the watchdog reads for session.
func (o WatchOptions) target(session string) string {
	t := o.Target
	if t == "" {
		t = DefaultWatchTarget
	}
	// tmux names a session "a.b" as "a_b": a target must say the same.
	return strings.ReplaceAll(t, "{session}", strings.NewReplacer(".", "_", ":", "_").Replace(session))
}

// watchMemory is what the watchdog keeps of one session; only the watch
// goroutine touches it.
type watchMemory struct {
	mem   watchdog.Memory
	task  string
	snap  gitx.Snap           // the repository when the task's last record was made
	since time.Time           // and when
	th    *breaker.Thresholds // the session's, once read
	seen  time.Time           // the last look that changed something
}

// watchLoop looks at every session until ctx ends.
func (d *Daemon) watchLoop(ctx context.Context) {
	tick := time.NewTicker(d.opts.Watch.Interval)
	defer tick.Stop()
	mem := map[string]*watchMemory{}
	for {
		d.watchOnce(ctx, mem)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// watchOnce looks at each session once.
func (d *Daemon) watchOnce(ctx context.Context, mem map[string]*watchMemory) {
	all, err := d.db.Sessions()
	if err != nil {
		d.logf("watchdog: %v", err)
		return
	}
	for _, s := range all {
		if ctx.Err() != nil {
			return
		}
		m := mem[s.Name]
		if m == nil {
			m = &watchMemory{}
			mem[s.Name] = m
		}
		ws := d.watchSession(ctx, s, m)
		if prev, _ := d.watch.get(s.Name); prev.Active != ws.Active && ws.TaskID != "" {
			if ws.Active {
				d.logf("[%s] watchdog: reading tmux %s for task %s", s.Name, ws.Target, ws.TaskID)
			} else {
				d.logf("[%s] watchdog: stopped reading tmux %s: %s", s.Name, ws.Target, ws.Message)
			}
		}
		d.watch.set(ws)
		d.db.cache.touch(s.Name) // its task's view shows what the watchdog reads
	}
}

// watchSession looks at one session and says what it watches.
func (d *Daemon) watchSession(ctx context.Context, s Session, m *watchMemory) WatchStatus {
	target := d.opts.Watch.target(s.Name)
	ws := WatchStatus{Session: s.Name, Target: target, Seen: m.seen, Status: m.mem.Taken.Fields["STATUS"]}
	t, err := d.db.CurrentTask(s.Name)
	d.mu.Lock()
	driven := d.workers[s.Name] != nil
	d.mu.Unlock()
	switch {
	case errors.Is(err, ErrNoTask):
		ws.Message = fmt.Sprintf("no task (ralph task start %s TITLE…)", s.Name)
		return ws
	case err != nil:
		ws.Message = err.Error()
		return ws
	}
	ws.TaskID = t.ID
	if ws.Message = notWatched(t, driven); ws.Message != "" {
		return ws
	}
	screens := d.opts.Watch.Screens
	ok, err := screens.Exists(ctx, target)
	if err == nil && ok {
		var text string
		if text, err = screens.Capture(ctx, target); err == nil {
			t = d.look(ctx, s, t, target, m, watchdog.Parse(text))
			ws.Seen, ws.Status = m.seen, m.mem.Taken.Fields["STATUS"]
			ws.Message = notWatched(t, false)
			ws.Active = ws.Message == ""
			return ws
		}
	}
	switch {
	case errors.Is(err, watchdog.ErrNoTmux):
		ws.Message = "tmux not installed"
	case err != nil:
		ws.Message = err.Error()
	default:
		ws.Message = "no tmux session " + target
	}
	return ws
}

// notWatched says why the watchdog leaves t alone ("": it does not).
func notWatched(t Task, driven bool) string {
	switch {
	case driven || t.State == fleet.Running || t.State == fleet.Queued:
		return "a loop worker drives this session"
	case t.State == fleet.Halted:
		return fmt.Sprintf("task %s is halted (%s); ralph task reset %s", t.ID, t.ExitReason, t.Session)
	case t.State != fleet.Waiting:
		return fmt.Sprintf("task %s is %s", t.ID, t.State)
	}
	return ""
}

// look folds one screen of a waiting task's agent into the task and
// returns the task as it left it.
func (d *Daemon) look(ctx context.Context, s Session, t Task, target string, m *watchMemory, scr watchdog.Screen) Task {
	now := d.opts.Now()
	if m.task != t.ID {
		// The repository as the watch begins: the first record's files
		// are those changed since.
		m.task, m.since, m.th = t.ID, now, nil
		m.snap, _ = gitx.Snapshot(ctx, s.Dir)
	}
	l := watchdog.Look{Task: t.ID, Screen: scr}
	if data, err := readTaskFile(t.File); err == nil {
		if f, err := taskfile.Parse(t.File, data); err == nil {
			l.Plan = &f.Checklist
		}
	}
	if !m.mem.Looked {
		l.Recorded = d.watchRecorded(t.Session, t.ID)
	}
	var v watchdog.Verdict
	m.mem, v = watchdog.Step(m.mem, l)
	if v.Block != nil || v.Checklist.Changed() {
		m.seen = now
	}
	if v.Checklist.Changed() && l.Plan != nil {
		d.bus.Publish(Event{Type: "watchdog_checklist", At: now, Session: s.Name, TaskID: t.ID, Message: l.Plan.Summary()})
	}
	if v.Block == nil && v.Done == "" {
		return t
	}
	var prog gitx.Progress
	inRepo := false
	if v.Block != nil {
		if after, err := gitx.SnapshotAfter(ctx, s.Dir, m.snap); err == nil {
			prog, inRepo = gitx.Compare(m.snap, after), after.InRepo
			m.snap = after
		}
	}
	if m.th == nil {
		th := d.watchThresholds(s)
		m.th = &th
	}
	t = d.applyWatch(t, target, v, prog, inRepo, *m.th, m.since, now)
	if v.Block != nil {
		m.since = now
	}
	return t
}

// watchRecorded is the status block of the task's last record, when the
// watchdog made it.
func (d *Daemon) watchRecorded(session, taskID string) map[string]string {
	h, err := d.db.History(session, taskID, 1)
	if err != nil || len(h) == 0 || h[0].Agent != watchAgent {
		return nil
	}
	if h[0].StatusBlock == nil {
		return map[string]string{}
	}
	return h[0].StatusBlock
}

// watchThresholds are the session's breaker settings, as its loop would
// read them; the defaults when they cannot be read.
func (d *Daemon) watchThresholds(s Session) breaker.Thresholds {
	if d.opts.Build != nil {
		spec, _, err := d.opts.Build(s.Dir, io.Discard)
		if err == nil {
			return spec.Policy.Breaker
		}
		d.logf("[%s] watchdog: the session's settings: %v; default breaker thresholds", s.Name, err)
	}
	return breaker.DefaultThresholds()
}

// applyWatch records what a look found, if the task is still the
// session's waiting task and no loop took it over meanwhile, and returns
// the task as it is now. It runs on the session's runner, as a command
// does: no lock of the daemon's is held while it writes and notifies.
func (d *Daemon) applyWatch(was Task, target string, v watchdog.Verdict, prog gitx.Progress, inRepo bool, th breaker.Thresholds, since, now time.Time) Task {
	out := was
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := d.send(ctx, was.Session, func(r *taskRunner) outcome {
		if r.t == nil || r.w != nil || r.t.ID != was.ID || r.t.State != fleet.Waiting {
			if r.t != nil {
				out = *r.t
			}
			return outcome{}
		}
		t := *r.t
		out = d.settleWatch(t, target, v, prog, inRepo, th, since, now)
		return outcome{}
	})
	if err != nil {
		d.logf("[%s] watchdog: %v", was.Session, err)
	}
	return out
}

// settleWatch applies a look's verdict to the waiting task t, on its
// runner.
func (d *Daemon) settleWatch(t Task, target string, v watchdog.Verdict, prog gitx.Progress, inRepo bool, th breaker.Thresholds, since, now time.Time) Task {
	if v.Block != nil {
		bd, err := d.recordWatch(t, target, v, prog, inRepo, th, since, now)
		if err != nil {
			d.logf("[%s] watchdog: %v", t.Session, err)
			return t
		}
		if bd.Halt() {
			t.State, t.ExitReason, t.Message, t.UpdatedAt = fleet.Halted, string(bd.Reason.ExitReason()), bd.Message, now
			d.settleWith(&t, NoticeHalted, strings.TrimSpace(t.ExitReason+": "+t.Message))
			return t
		}
	}
	if v.Done != "" {
		t.State, t.ExitReason, t.Message, t.UpdatedAt = fleet.Done, string(v.Done), v.Why+" (tmux "+target+")", now
		d.settleWith(&t, NoticeDone, t.ExitReason)
	}
	return t
}

// recordWatch saves a status block as one of the task's iterations, as the
// core folds it (loop.FoldWatch), and shows it in the task file's status
// section.
func (d *Daemon) recordWatch(t Task, target string, v watchdog.Verdict, prog gitx.Progress, inRepo bool, th breaker.Thresholds, since, now time.Time) (breaker.Decision, error) {
	// A session never run has no state yet: the fold starts one.
	st, _, err := d.db.LoadState(t.Session)
	if err != nil {
		return breaker.Decision{}, err
	}
	w := loop.Watched{Since: since, At: now, Observed: loop.Observe(v.Block.Analysis), InRepo: inRepo,
		Changed: prog.Changed, Files: len(prog.FilesChanged), PlanGain: v.Gain, Done: v.Done}
	st, rec, bd := loop.FoldWatch(st, w, th)
	if err := d.db.SaveState(t.Session, t.ID, st, &rec); err != nil {
		return bd, err
	}
	status := rec.StatusBlock["STATUS"]
	if status == "" {
		status = rec.Status
	}
	if err := rewriteTaskFile(t.File, status, blockFields(rec.StatusBlock)); err != nil {
		d.logf("task %s: task file: %v", t.ID, err)
	}
	msg := fmt.Sprintf("STATUS %s, EXIT_SIGNAL %s on tmux %s", orDash(rec.StatusBlock["STATUS"]), orDash(rec.StatusBlock["EXIT_SIGNAL"]), target)
	d.logf("[%s] watchdog: %s", t.Session, msg)
	d.bus.Publish(Event{Type: "watchdog_status", At: now, Session: t.Session, TaskID: t.ID, State: t.State, Loop: t.budget().Used(st.Loop), Message: msg})
	return bd, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
