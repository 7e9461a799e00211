package serve

import (
	"fmt"
	"slices"

	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/redact"
)

// A question is a wait inside the task's loop (loop.WaitAnswer): the loop
// keeps running, its goroutine waiting, while the task shows waiting with
// the questions, and the answer goes to that loop through its controller —
// the same on the local engine and on a Temporal workflow. The loop's saved
// state holds the question: a restarted daemon starts the wait again
// (rewait); after a stop ended it, the answer goes into that state and the
// task is queued, and its next run gives the answer to its first call.

// waitForAnswer shows the task waiting with the questions its loop asks,
// and gives the question's notice in the same transaction. A loop that
// asks again after a restart asks nothing new: no second notice.
func (r *taskRunner) waitForAnswer() {
	d := r.d
	r.load()
	if r.w == nil || r.t == nil || r.t.ID != r.w.taskID {
		return
	}
	st, _, err := d.db.LoadState(r.session)
	if err != nil {
		d.logf("[%s] question: %v", r.session, err)
		return
	}
	if !st.Ask.Waiting() || r.w.ctl.answers(st.Ask.Loop) || d.db.HasPendingAnswer(r.w.taskID) {
		return // answered meanwhile: the loop takes it at its next look, or its slot
	}
	t := *r.t
	qs := asked(st.Ask)
	if t.State == fleet.Waiting && slices.Equal(t.Questions, qs) {
		return
	}
	t.State, t.ExitReason, t.Message = fleet.Waiting, string(reason.NeedsClarification), fmt.Sprintf("the agent asks (loop %d)", t.budget().Used(st.Ask.Loop))
	t.Questions, t.UpdatedAt = qs, d.opts.Now()
	if err := d.settleWith(&t, NoticeQuestion, ""); err != nil {
		return
	}
	r.load()
	// Its slot is free while a person thinks: the next in the queue starts.
	d.schedule()
}

// answer gives a waiting task the answer to its questions: in its task
// file's "## Answers" section, the record people read, and to its loop,
// which goes on in the same run and agent session with the answer in its
// next call's prompt. A budget the asking call spent is extended. A loop
// that no longer waits (a stop ended its wait) finds the answer in its
// saved state when it starts again, queued as any loop is.
func (r *taskRunner) answer(text, by string) (TaskView, error) {
	d, session := r.d, r.session
	if r.inCall != nil && r.w != nil {
		return r.answerInCall(text, by)
	}
	cur, err := d.current(fleet.Answer, session)
	if err != nil {
		return TaskView{}, err
	}
	t := *cur
	data, err := readTaskFile(t.File)
	if err != nil {
		return TaskView{}, err
	}
	text = redact.String(text)
	if err := writeTaskFile(t.File, appendAnswer(data, maskStrings(t.Questions), text, d.opts.Now())); err != nil {
		return TaskView{}, err
	}
	r.answeredKept() // a question a restart ended the call of
	st, found, err := d.db.LoadState(session)
	if err != nil {
		return TaskView{}, err
	}
	b := t.budget().Topped(st.Loop, DefaultMaxLoops)
	left := b.Left(st.Loop)
	t.MaxLoops, t.Questions, t.ExitReason, t.Message, t.UpdatedAt = b.MaxLoops, nil, "", "", d.opts.Now()
	if r.w != nil {
		// The loop waits with its slot given up: it goes on when the
		// scheduler gives it one (at once when one is free, before this
		// replies), never past --max-parallel.
		if err := d.db.SetPendingAnswer(t.ID, pendingAnswer{Text: text, By: by, To: st.Ask.Loop, Loops: left}); err != nil {
			return TaskView{}, err
		}
		t.State = fleet.Queued
		if err := d.db.UpdateTask(t); err != nil {
			return TaskView{}, err
		}
		r.load()
		d.publish(t, "task_answered", "")
		d.schedule()
		return d.Status(session)
	}
	if found {
		if next, ok := loop.Answer(st, st.Ask.Loop, text, by); ok {
			if err := d.db.SaveState(session, t.ID, next, nil); err != nil {
				return TaskView{}, err
			}
		}
	}
	// A workflow of before the wait in the core waits for its resume
	// signal (serve.Resumer) and reads the answer in the task file.
	if err := d.resume(t, left, by); err != nil {
		return TaskView{}, fmt.Errorf("the answer is in the task file, but %w (ralph task loop tries again)", err)
	}
	t.State = fleet.Queued
	if err := d.db.UpdateTask(t); err != nil {
		return TaskView{}, err
	}
	r.load()
	d.publish(t, "task_answered", "")
	d.schedule()
	return d.Status(session)
}

// rewait starts again the loop of a task that waits for an answer, when no
// loop does (the daemon restarted): the loop finds the question in its
// saved state and waits for the answer, the task still waiting, its slot
// free, and an answer then goes to it as before the restart.
func (r *taskRunner) rewait() {
	d := r.d
	r.load()
	if r.w != nil || r.t == nil || !waitsForAnswer(*r.t) {
		return
	}
	st, _, err := d.db.LoadState(r.session)
	if err != nil || !st.Ask.Waiting() {
		return
	}
	if r.keepAnswer(st) {
		// Answered before a kill took the task's queueing with it: the
		// answer is in the task file; queue the task, and its loop starts
		// with the answer in the saved state, taking its turn for a slot.
		t := *r.t
		t.State, t.Questions, t.ExitReason, t.Message, t.UpdatedAt = fleet.Queued, nil, "", "", d.opts.Now()
		if err := d.db.UpdateTask(t); err == nil {
			r.load()
			d.schedule()
		}
		return
	}
	d.mu.Lock()
	ctx := d.ctx
	d.mu.Unlock()
	if ctx == nil || ctx.Err() != nil {
		return
	}
	if err := r.launch(ctx, *r.t); err != nil {
		d.logf("[%s] the wait for an answer: %v", r.session, err)
	}
}

// waitsForAnswer reports a task its loop showed waiting for an answer; one
// whose wait a stop ended waits for a person too, but no loop waits with it.
func waitsForAnswer(t Task) bool {
	return t.State == fleet.Waiting && len(t.Questions) > 0 && t.ExitReason == string(reason.NeedsClarification)
}

// giveAnswer hands the answer kept for a loop that waits (a slot was not
// free when it came) to that loop, now that the scheduler chose the task,
// and shows the task running again.
func (r *taskRunner) giveAnswer() {
	d := r.d
	a, ok, err := d.db.TakePendingAnswer(r.t.ID)
	if err != nil {
		d.logf("[%s] answer: %v", r.session, err)
		return
	}
	if ok {
		r.w.ctl.answer(a.Text, a.By, a.To, a.Loops)
	}
	t := *r.t
	t.State, t.UpdatedAt = fleet.Running, d.opts.Now()
	if err := d.db.UpdateTask(t); err != nil {
		d.logf("[%s] answer: %v", r.session, err)
	}
	r.load()
}

// keepAnswer writes a kept answer into st, the saved state of a task
// whose loop is gone (a restart, a stop), for its next run's first call;
// it reports whether there was one.
func (r *taskRunner) keepAnswer(st loop.State) bool {
	d := r.d
	a, ok, err := d.db.TakePendingAnswer(r.t.ID)
	if err != nil || !ok {
		return false
	}
	if next, ok := loop.Answer(st, a.To, a.Text, a.By); ok {
		if err := d.db.SaveState(r.session, r.t.ID, next, nil); err != nil {
			d.logf("[%s] answer: %v", r.session, err)
		}
	}
	return true
}
