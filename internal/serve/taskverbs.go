package serve

import (
	"context"
	"fmt"
	"os"
	"strings"

	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/taskfile"
)

// The commands on a task, as its runner carries them out (taskrunner.go):
// each runs on the runner's goroutine, one at a time for the task, and
// holds no lock of the daemon's while it writes, renames or calls out.

// start creates a task on a free session and its task file. It waits for
// `loop`; meanwhile the watchdog follows an interactive agent on it. An
// origin that wants to hear of it gives replyTo (a chat id), kept with the
// task and handed back in its notices.
func (r *taskRunner) start(ctx context.Context, title, origin, replyTo, originURL string) (TaskView, error) {
	d, session := r.d, r.session
	if _, err := d.current(fleet.Start, session); err != nil {
		return TaskView{}, err
	}
	now := d.opts.Now()
	st, found, err := d.db.LoadState(session)
	if err != nil {
		return TaskView{}, err
	}
	// The task's loops count from 1 and its breaker is its own, on every
	// surface (the core says what a new task keeps of its session).
	if found {
		st = loop.ForTask(st, now.UTC().Round(0))
		if err := d.db.SaveState(session, "", st, nil); err != nil {
			return TaskView{}, err
		}
	}
	path := d.opts.Home.TaskFile(session)
	if data, err := readTaskFile(path); err == nil {
		// A file no task owns (a crash between writing it and the insert,
		// or a hand-made one): keep it aside rather than overwrite it.
		aside := fmt.Sprintf("%s.orphan-%s", path, now.UTC().Format("20060102T150405Z"))
		if err := os.Rename(path, aside); err != nil {
			return TaskView{}, err
		}
		if _, perr := taskfile.Parse(path, data); perr != nil {
			d.logf("[%s] %v; kept aside as %s", session, perr, aside)
		}
	}
	if err := writeTaskFile(path, taskfile.Update(taskfile.New(title, session, now), "WAITING", []taskfile.Field{})); err != nil {
		return TaskView{}, err
	}
	t, err := d.db.CreateTask(ctx, Task{Session: session, Title: strings.Join(strings.Fields(title), " "), Origin: origin,
		State: fleet.Waiting, FirstLoop: st.Loop, FirstCost: st.CostUSD, File: path, CreatedAt: now, ReplyTo: replyTo, OriginURL: originURL})
	if err != nil {
		return TaskView{}, err
	}
	d.logf("[%s] task %s created: %s", session, t.ID, t.Title)
	d.publish(t, "task_created", t.Title)
	r.load()
	return d.view(t)
}

// loop queues the task for up to max more iterations. A Resumer's waiting
// loop hears of it first, so the task is queued only once it has.
func (r *taskRunner) loop(maxLoops int, by string) (TaskView, error) {
	d, session := r.d, r.session
	cur, err := d.current(fleet.Loop, session)
	if err != nil {
		return TaskView{}, err
	}
	t := *cur
	if maxLoops <= 0 {
		maxLoops = DefaultMaxLoops
	}
	v, err := d.view(t)
	if err != nil {
		return TaskView{}, err
	}
	b := t.budget().Grant(t.FirstLoop+v.LoopCount, maxLoops)
	t.MaxLoops = b.MaxLoops
	if err := d.resume(t, b.Left(t.FirstLoop+v.LoopCount), by); err != nil {
		return TaskView{}, err
	}
	t.State, t.ExitReason, t.Message, t.UpdatedAt = fleet.Queued, "", "", d.opts.Now()
	if err := d.db.UpdateTask(t); err != nil {
		return TaskView{}, err
	}
	r.load()
	d.publish(t, "task_queued", "")
	d.schedule()
	return d.Status(session)
}

// stop ends the task's loop after its current iteration (a queued task
// leaves the queue); the task waits.
func (r *taskRunner) stop(by string) (TaskView, error) {
	d, session := r.d, r.session
	cur, err := d.current(fleet.Stop, session)
	if err != nil {
		return TaskView{}, err
	}
	switch {
	case r.w != nil:
		// A loop waiting for an answer stops waiting: the task keeps its
		// questions.
		r.w.ctl.stop(by)
	case cur.State == fleet.Waiting:
		// Waiting for an answer no loop waits for (the daemon
		// restarted): nothing runs to stop.
	default:
		t := *cur
		t.State, t.ExitReason, t.Message, t.UpdatedAt = fleet.Waiting, "interrupted", "stopped before it started, by "+by, d.opts.Now()
		d.settle(&t)
	}
	return d.Status(session)
}

// cancel gives the task up: a running loop is ended at once (its agent
// killed), the task file archived, the session freed. The reply waits for
// the loop's end without polling: it is closed when the end is saved.
func (r *taskRunner) cancel(by string) outcome {
	d, session := r.d, r.session
	cur, err := d.current(fleet.Cancel, session)
	if err != nil {
		return outcome{err: err}
	}
	if w := r.w; w != nil {
		w.cancelled = true
		w.cancel()
		return outcome{wait: w.gone, taskID: cur.ID}
	}
	t := *cur
	t.State, t.ExitReason, t.Message, t.UpdatedAt = fleet.Cancelled, "", "cancelled by "+by, d.opts.Now()
	d.forget(t)
	d.settle(&t)
	v, err := d.view(t)
	return outcome{v: v, err: err}
}

// reset closes the session's circuit breaker: a running loop applies it
// before its next call; otherwise the stored state is reset and a halted
// task waits for a new `loop`.
func (r *taskRunner) reset(by string) (TaskView, error) {
	d, session := r.d, r.session
	cur, err := d.current(fleet.Reset, session)
	if err != nil {
		return TaskView{}, err
	}
	now := d.opts.Now()
	if r.w != nil {
		r.w.ctl.reset(fmt.Sprintf("api-%d", now.UnixNano()), by, "reset by "+by)
	} else {
		st, found, err := d.db.LoadState(session)
		if err == nil && found {
			st, _, _ = loop.ResetBreaker(st, now.UTC().Round(0), loop.BreakerReset{By: by})
			err = d.db.SaveState(session, cur.ID, st, nil)
		}
		if err != nil {
			return TaskView{}, err
		}
		if cur.State == fleet.Halted {
			t := *cur
			t.State, t.UpdatedAt = fleet.Waiting, now
			d.settle(&t)
		}
	}
	d.logf("[%s] circuit breaker reset by %s", session, by)
	return d.Status(session)
}

// pauseResume holds the task's running loop before its next iteration (at
// once while it waits), or lets a paused one go on; the task stays running
// and keeps its slot. The request is kept in the store too: a restarted
// daemon's loop of the task holds again.
func (r *taskRunner) pauseResume(verb fleet.Verb, by string) (TaskView, error) {
	d, session := r.d, r.session
	cur, err := d.current(verb, session)
	if err != nil {
		return TaskView{}, err
	}
	if r.w == nil {
		return TaskView{}, &fleet.Error{Code: fleet.Conflict, Msg: fmt.Sprintf("task %s on session %s has no running loop", cur.ID, session)}
	}
	pauseBy := ""
	if verb == fleet.Pause {
		pauseBy = by
	}
	if err := d.db.SetPaused(cur.ID, pauseBy); err != nil {
		return TaskView{}, err
	}
	if verb == fleet.Pause {
		r.w.ctl.pause(by)
	} else {
		r.w.ctl.resume()
	}
	d.logf("[%s] %s requested by %s", session, verb, by)
	d.publish(*cur, "task_"+string(verb)+"_requested", "")
	return d.Status(session)
}

// setPRURL records the pull request the session's latest task led to.
func (r *taskRunner) setPRURL(url string, draft bool) error {
	d := r.d
	t, err := d.db.CurrentTask(r.session)
	if err != nil {
		return err
	}
	if t.PRURL == url && t.PRDraft == draft {
		return nil
	}
	t.PRURL, t.PRDraft = url, draft
	if err := d.db.UpdateTask(t); err != nil {
		return err
	}
	d.publish(t, "task_pr", url)
	return nil
}
