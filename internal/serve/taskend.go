package serve

import (
	"os"
	"slices"
	"strings"
	"time"

	"ralph/internal/engine"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/scarce"
)

// How a task's loop ends: its new state saved, its file archived, its
// notice given.

// finish records how a loop ended and what it makes of the task. A disk
// too full to save it is waited out: the task stays the worker's, shown
// waiting, until its end is saved (or the daemon stops, and the next one
// resumes it).
func (d *Daemon) finish(started Task, w *worker, res engine.Result, questions []string, runErr error) {
	for n := 0; ; n++ {
		err := d.finishOnce(started, w, res, questions, runErr)
		why := scarce.Reason(err, "")
		if why == "" {
			return
		}
		wait := scarce.Backoff(n)
		d.hold(started.Session, "saving the task's end: "+why, loop.WaitResources, d.opts.Now().Add(wait))
		if engine.SleepContext(d.ctx, wait) != nil {
			return
		}
	}
}

// finishOnce is one try of finish; the error is a shortage that kept the
// task's new state from being saved (others are logged).
func (d *Daemon) finishOnce(started Task, w *worker, res engine.Result, questions []string, runErr error) error {
	// The task's runner calls it, holding no lock (taskrunner.go).
	done := func() { d.release(started.Session, w) }
	t, err := d.db.Task(started.ID)
	if err := dbErr(err); scarce.Of(err) != "" {
		return err
	}
	if err != nil {
		done()
		d.logf("task %s: %v", started.ID, err)
		return nil
	}
	if d.ctx.Err() != nil && !w.cancelled {
		// The daemon is stopping: the task stays running in the store and
		// the next daemon resumes it.
		done()
		return nil
	}
	now := d.opts.Now()
	t.UpdatedAt = now
	switch {
	case w.cancelled:
		t.State, t.ExitReason, t.Message = fleet.Cancelled, string(reason.Interrupted), "cancelled"
	case runErr != nil:
		t.State, t.ExitReason, t.Message = fleet.Halted, "", runErr.Error()
	default:
		t.State, t.ExitReason, t.Message = fleet.AfterLoop(res.Reason), string(res.Reason), res.Message
		t.Questions = questions
	}
	kind, msg := endNotice(t)
	if kind == NoticeQuestion && started.State == fleet.Waiting && slices.Equal(started.Questions, t.Questions) {
		kind = "" // asked before this loop started again (rewait): noticed then
	}
	if err := d.settleWith(&t, kind, msg); scarce.Of(err) != "" {
		return err
	}
	done()
	d.hold(t.Session, "", "", time.Time{})
	return nil
}

// endNotice is the kind of notice a loop's end gives, and its message;
// "" for none (a cancel: its asker knows).
func endNotice(t Task) (kind, msg string) {
	why := strings.TrimPrefix(t.ExitReason+": "+t.Message, ": ")
	switch {
	case t.State == fleet.Done:
		return NoticeDone, t.ExitReason
	case t.State == fleet.Halted:
		return NoticeHalted, why
	case len(t.Questions) > 0 && t.ExitReason == string(reason.NeedsClarification):
		// A loop that ended on its question (a Temporal workflow of
		// before the wait in the core); one stopped while it waited for
		// the answer was asked before (waitForAnswer).
		return NoticeQuestion, ""
	case t.State == fleet.Waiting:
		return NoticeStopped, why
	}
	return "", ""
}

// notice is a notice about t, without its kind.
func (d *Daemon) notice(t Task) Notice {
	n := Notice{Session: t.Session, TaskID: t.ID, Title: t.Title, Origin: t.Origin, ReplyTo: t.ReplyTo,
		Reason: t.ExitReason, Loops: t.Loops, MaxLoops: t.MaxLoops}
	if h, err := d.db.recentHistory(t.Session, t.ID); err == nil {
		n.Summary = lastSummary(h)
	}
	if p, err := d.db.progress(t.Session); err == nil {
		n.CostUSD = taskCost(p, t)
	}
	return n
}

// settle saves a task that changed state, rewrites its file's status and
// archives a finished one, on the task's runner. The error is the store's, also
// logged: a shortage leaves the task as it was, to settle again.
func (d *Daemon) settle(t *Task) error { return d.settleWith(t, "", "") }

// settleWith is settle that also puts a notice of kind (none when "") in
// the outbox, in the transaction that saves the task: a crash loses
// neither or both.
func (d *Daemon) settleWith(t *Task, kind, message string) error {
	if st, found, err := d.db.LoadState(t.Session); err == nil && found {
		t.Loops = t.budget().Used(st.Loop)
	}
	dst := d.opts.Home.ArchiveFile(t.Session, t.ID)
	if t.State.Finished() && missing(t.File) && !missing(dst) {
		t.File = dst // archived by a try whose save found the disk full
	}
	if err := rewriteTaskFile(t.File, strings.ToUpper(string(t.State)), nil); err != nil {
		d.logf("task %s: task file: %v", t.ID, err)
	}
	if t.State.Finished() && t.File != dst {
		if err := os.Rename(t.File, dst); err != nil {
			d.logf("task %s: archive: %v", t.ID, err)
		} else {
			t.File = dst
		}
	}
	var n *Notice
	if kind != "" {
		x := d.notice(*t)
		x.Kind, x.Message = kind, message
		if kind == NoticeQuestion {
			x.Questions = t.Questions
		}
		if kind == NoticeApproval {
			x.Item, _, _ = strings.Cut(message, " ")
		}
		n = &x
	}
	if err := d.db.UpdateTaskNotice(*t, n, d.outbox.names, time.Now()); err != nil {
		d.logf("task %s: %v", t.ID, err)
		return err
	}
	msg := t.ExitReason
	if t.Message != "" {
		msg = strings.TrimPrefix(msg+": "+t.Message, ": ")
	}
	d.logf("[%s] task %s %s %s", t.Session, t.ID, t.State, msg)
	d.publish(*t, "task_"+string(t.State), msg)
	if n != nil {
		d.outbox.wakeAll()
	}
	return nil
}

func (d *Daemon) publish(t Task, typ, msg string) {
	d.bus.Publish(Event{Type: typ, At: d.opts.Now(), Session: t.Session, TaskID: t.ID, State: t.State, Message: msg})
}
