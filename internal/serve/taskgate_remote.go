package serve

import (
	"context"
	"strings"

	"ralph/internal/fleet"
	"ralph/internal/gate"
	"ralph/internal/loop"
)

// RemoteGate is the daemon's side of the gate of a loop's calls that run
// elsewhere (a Temporal worker): the loop holds each item a call waits on,
// under its own id, and hands it here to be shown on the task and decided
// by the task's responders through the one command path, as the local
// gate's are. Both block until the answer or decision, or ctx's end (the
// call no longer waits on it).
type RemoteGate interface {
	Ask(ctx context.Context, id string, q gate.Question) (string, error)
	Approve(ctx context.Context, id string, a gate.Approval) (Verdict, error)
	// Settled says the loop's calls wait on nothing: a task still shown
	// waiting on an item from before the daemon restarted (which the
	// call no longer waits on) shows running again.
	Settled(ctx context.Context)
}

// Verdict is a person's decision on a tool call, with what the loop
// elsewhere must keep of it: an allow for the rest of the task, and the
// decision's record for the call's receipt.
type Verdict struct {
	gate.Decision
	ForTask bool
	Record  *loop.GateDecision
}

// remoteGate is the RemoteGate of a task's loop elsewhere.
func (d *Daemon) remoteGate(session string) RemoteGate {
	return remoteGate{&taskGate{d: d, session: session, elsewhere: true}}
}

type remoteGate struct{ g *taskGate }

func (r remoteGate) Ask(ctx context.Context, id string, q gate.Question) (string, error) {
	return r.g.ask(ctx, &inCallAsk{id: id, q: q, answer: make(chan string, 1)})
}

func (r remoteGate) Approve(ctx context.Context, id string, a gate.Approval) (Verdict, error) {
	p := &inCallApproval{g: r.g, id: id, a: a, what: ApprovalWhat(a), decision: make(chan gate.Decision, 1)}
	dec, err := r.g.approveItem(ctx, p)
	if err != nil {
		return Verdict{}, err
	}
	return Verdict{Decision: dec, ForTask: p.forTask, Record: p.rec}, nil
}

func (r remoteGate) Settled(ctx context.Context) {
	_, _ = r.g.d.send(ctx, r.g.session, func(tr *taskRunner) outcome {
		if tr.t != nil && waitsInCall(*tr.t) && tr.inCall == nil && len(tr.approvals) == 0 {
			tr.backToRunning("the call waits on nobody now")
		}
		return outcome{}
	})
}

// noticeOnce is kind, unless the task already shows the same wait: a
// daemon that restarted while a call elsewhere waits shows its items
// again, and gives no second notice of them.
func noticeOnce(cur *Task, next Task, kind string) string {
	if cur != nil && cur.State == fleet.Waiting && cur.Message == next.Message && strings.Join(cur.Questions, "\n") == strings.Join(next.Questions, "\n") {
		return ""
	}
	return kind
}

// waitsInCall reports a task its loop showed waiting on a person inside a
// call (the gate's ask or approve).
func waitsInCall(t Task) bool {
	return t.State == fleet.Waiting && (strings.HasPrefix(t.Message, "waiting: approval ") || strings.HasPrefix(t.Message, "waiting: question "))
}

// rejoin follows again the loop elsewhere of a task whose call waited on a
// person when the daemon stopped: the call did not die with the daemon (it
// runs on a worker), so its items are shown again, under the same ids, and
// a decision still reaches it. The task stays waiting meanwhile.
func (r *taskRunner) rejoin() {
	d := r.d
	r.load()
	if r.w != nil || r.t == nil || !waitsInCall(*r.t) {
		return
	}
	d.mu.Lock()
	ctx := d.ctx
	d.mu.Unlock()
	if ctx == nil || ctx.Err() != nil {
		return
	}
	if err := r.launch(ctx, *r.t); err != nil {
		d.logf("[%s] following the call that waits: %v", r.session, err)
	}
}
