package serve

import (
	"slices"
	"strings"

	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/redact"
)

// What survives a daemon's restart (SIGTERM or kill -9) is the pending
// tool call, not the call that waits on it: the call dies with its owner.
// The store keeps each approval a call waits on (db_gate.go) until it is
// decided inside the call. A restarted daemon shows the task still waiting
// with it on every surface; a person decides it as before (approve, allow
// for this task, deny); once nothing is left undecided the task is queued,
// and its next call resumes the agent session that asked, with the
// decisions in its prompt (as an answer, loop.AnswerSection) and in its
// receipt. "Allow for this task" is kept in the store too.

// stopping reports a daemon on its way down: a call that ends now ends
// with it, and what it waited on is kept for the next daemon.
func (d *Daemon) stopping() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ctx != nil && d.ctx.Err() != nil
}

// keepsGateItems reports a daemon whose loops' calls die with it (the
// local backend): what they wait on is kept for the next daemon. A loop
// that outlives the daemon (Temporal's) keeps its own.
func (d *Daemon) keepsGateItems() bool {
	o, ok := d.opts.Runner.(LoopsOutliver)
	return !ok || !o.LoopsOutliveTheDaemon()
}

// LoopsOutliver is a Runner whose loops go on while no daemon runs.
type LoopsOutliver interface{ LoopsOutliveTheDaemon() bool }

// restoreKept gives a task's runner the approvals a previous daemon's call
// left waiting.
func (d *Daemon) restoreKept(t Task) {
	kept, err := d.db.KeptGateItems(t.ID)
	if err != nil {
		d.logf("[%s] pending approvals: %v", t.Session, err)
		return
	}
	if len(kept) == 0 {
		return
	}
	_, _ = d.send(d.ctx, t.Session, func(r *taskRunner) outcome {
		if r.t == nil || r.t.ID != t.ID || r.w != nil {
			return outcome{}
		}
		r.kept, r.keptOf = kept, t.ID
		for _, k := range kept {
			// Later items of the task's next call do not reuse an id a
			// person may still press a button for.
			r.asks = max(r.asks, itemSeq(k.Item))
		}
		r.syncPending()
		if r.t.State == fleet.Waiting && len(r.t.Questions) == 0 && len(r.pendingItems()) == 0 {
			// All decided before the last daemon could queue the task.
			if err := r.goOnKept("decided before the restart: the agent goes on"); err != nil {
				d.logf("[%s] %v", t.Session, err)
			}
		}
		return outcome{}
	})
}

// keptItem is the kept approval item still to be decided, if any.
func (r *taskRunner) keptItem(item string) *keptItem {
	if r.t == nil || r.keptOf != r.t.ID {
		return nil
	}
	for i := range r.kept {
		if r.kept[i].Item == item && r.kept[i].Decided == nil && r.kept[i].Kind != pendingQuestion {
			return &r.kept[i]
		}
	}
	return nil
}

// decideKept decides a kept approval whose call a restart ended: the
// decision waits in the store for the task's next call, which the last
// decision queues.
func (r *taskRunner) decideKept(item string, allow, forTask bool, why string, who fleet.Who) (TaskView, error) {
	d, by := r.d, who.String()
	k := r.keptItem(item)
	word, tell := "allowed once", "a person ("+by+") allowed it: run it again"
	switch {
	case !allow:
		why = strings.TrimSpace(why)
		if why == "" {
			why = "denied by " + by
		}
		word, tell = "denied", "a person ("+by+") denied it: "+clipLine(why, 300)+". Do without it"
	case forTask && !r.grant(k.Key):
		word = "allowed once (nothing exact to allow for the task)"
	case forTask:
		word, tell = "allowed for this task", "a person ("+by+") allowed it for the rest of the task: run it again"
	}
	decided := func(k *keptItem, allow bool, word, tell string) error {
		dec := keptDecision{Allow: allow, Prompt: k.What + ": " + tell,
			Record: loop.GateDecision{At: d.opts.Now(), Item: k.Item, What: k.What, Outcome: word,
				Surface: string(who.Surface), User: clipLine(redact.String(who.User), 100)}}
		if err := d.db.DecideGateItem(r.t.ID, k.Item, dec); err != nil {
			return err
		}
		k.Decided = &dec
		return nil
	}
	if err := decided(k, allow, word, tell); err != nil {
		return TaskView{}, err
	}
	if allow && forTask {
		// The same call waiting twice is decided once.
		for i := range r.kept {
			if o := &r.kept[i]; o.Decided == nil && r.granted(o.Key) {
				if err := decided(o, true, "allowed (for this task)", "allowed for the rest of the task: run it again"); err != nil {
					return TaskView{}, err
				}
			}
		}
	}
	d.logf("[%s] %s (%s) %s by %s; its call ended with the last daemon", r.session, k.Item, k.What, word, by)
	r.syncPending()
	if items := r.pendingItems(); len(items) > 0 || len(r.t.Questions) > 0 {
		// Still waiting: the message names the newest item left.
		if len(items) > 0 {
			t := *r.t
			last := items[len(items)-1]
			t.Message, t.UpdatedAt = "waiting: approval "+last.ID+" for "+last.What, d.opts.Now()
			if err := d.db.UpdateTask(t); err != nil {
				return TaskView{}, err
			}
			r.load()
			d.publish(t, "task_waiting", t.Message)
		}
		return d.Status(r.session)
	}
	// Nothing left to decide: the task's next call takes the decisions.
	if err := r.goOnKept(k.What + " " + word + " by " + by + ": the agent goes on"); err != nil {
		return TaskView{}, err
	}
	return d.Status(r.session)
}

// goOnKept queues the waiting task whose kept items are all decided: its
// next call takes the decisions.
func (r *taskRunner) goOnKept(msg string) error {
	d := r.d
	t := *r.t
	t.State, t.Message, t.UpdatedAt = fleet.Queued, msg, d.opts.Now()
	if err := d.db.UpdateTask(t); err != nil {
		return err
	}
	r.load()
	d.publish(t, "task_queued", t.Message)
	d.schedule()
	return nil
}

// answeredKept marks the task's kept questions answered (the answer is in
// the task file): they no longer show, and the next call still resumes
// their agent session.
func (r *taskRunner) answeredKept() {
	if r.t == nil || r.keptOf != r.t.ID {
		return
	}
	for i := range r.kept {
		if k := &r.kept[i]; k.Kind == pendingQuestion && k.Decided == nil {
			dec := keptDecision{Allow: true}
			if err := r.d.db.DecideGateItem(r.t.ID, k.Item, dec); err != nil {
				r.d.logf("[%s] %s: %v", r.session, k.Item, err)
				continue
			}
			k.Decided = &dec
		}
	}
	r.syncPending()
}

// allowedOnce takes a one-time allowance a person gave after a restart
// ended the call that asked: the call that asks again gets it unasked.
func (r *taskRunner) allowedOnce(key string) bool {
	if key == "" {
		return false
	}
	i := slices.Index(r.once, key)
	if i < 0 {
		return false
	}
	r.once = slices.Delete(r.once, i, i+1)
	return true
}

// takeKept hands the decisions on the task's kept approvals to its next
// call, as the loop starts: the call resumes the agent session that asked,
// with the decisions in its prompt (the saved state's answer) and in its
// receipt.
func (r *taskRunner) takeKept() {
	d := r.d
	kept, err := d.db.TakeGateItems(r.t.ID)
	if err != nil {
		d.logf("[%s] pending approvals: %v", r.session, err)
		return
	}
	r.kept, r.keptOf, r.once, r.carry = nil, "", nil, nil
	r.syncPending()
	if len(kept) == 0 {
		return
	}
	st, _, err := d.db.LoadState(r.session)
	if err != nil {
		d.logf("[%s] pending approvals: %v", r.session, err)
		return
	}
	var qs, lines []string
	session := ""
	for _, k := range kept {
		if k.AgentSession != "" {
			session = k.AgentSession
		}
		if k.Kind == pendingQuestion {
			continue // its answer is in the task file, which the prompt quotes
		}
		qs = append(qs, "May I run "+k.What+"? (your call ended while it waited: ralph restarted)")
		if k.Decided == nil {
			lines = append(lines, k.What+": nobody decided before the call ended, and it did not run; call it again if you still need it, and wait for the decision")
			continue
		}
		lines = append(lines, k.Decided.Prompt)
		r.carry = append(r.carry, k.Decided.Record)
		if k.Decided.Allow && k.Key != "" {
			r.once = append(r.once, k.Key)
		}
	}
	next := st
	if len(lines) > 0 {
		next = withKeptAnswer(st, qs, strings.Join(lines, "\n"))
	}
	if session != "" && loop.ValidSessionID(session) == nil && next.Session.ID != session {
		next.Session = loop.AgentSession{ID: session, Started: d.opts.Now()}
	}
	if err := d.db.SaveState(r.session, r.t.ID, next, nil); err != nil {
		d.logf("[%s] pending approvals: %v", r.session, err)
		return
	}
	d.logf("[%s] the next call resumes agent session %q with %d decision(s) made after the restart", r.session, next.Session.ID, len(kept))
}

// withKeptAnswer is st with the decisions as the answer its next call's
// prompt carries (and Fold then clears). An answer already waiting for
// that call stays, with these after it.
func withKeptAnswer(st loop.State, qs []string, answer string) loop.State {
	a := st.Ask
	if a.Answer == "" {
		a = loop.Ask{}
	}
	if a.Loop == 0 {
		a.Loop = st.Loop + 1
	}
	a.Questions = append(slices.Clone(a.Questions), qs...)
	a.Answer = strings.TrimSpace(strings.TrimSpace(a.Answer) + "\n" + answer)
	if a.By == "" {
		a.By = "ralph"
	}
	st.Ask = a
	return st
}
