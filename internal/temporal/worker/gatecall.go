package worker

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"ralph/internal/gate"
	"ralph/internal/loop"
	"ralph/internal/redact"
	wf "ralph/internal/temporal"
)

// gateMargin is how much longer than APPROVAL_TIMEOUT the worker's gate
// waits for the workflow's answer: the workflow's timer decides a wait
// that runs out, and the person's time is all its.
const gateMargin = 2 * time.Minute

// callGate is a call's gate.Responder on a worker: each ask goes to the
// call's own workflow run as the gate update, which answers once a person
// decided (or the wait ran out). It keeps the decisions for the call's
// receipt.
type callGate struct {
	c       client.Client
	wf, run string
	attempt int32
	// timeout is APPROVAL_TIMEOUT, which the workflow's timer keeps.
	timeout time.Duration
	g       *gate.Gate

	mu  sync.Mutex
	log []loop.GateDecision
}

// newCallGate is the gate of the activity's call, or nil when the worker
// cannot serve one (it cannot name its own executable for the bridge).
func newCallGate(ctx context.Context, timeout time.Duration) (*callGate, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = gate.DefaultTimeout
	}
	info := activity.GetInfo(ctx)
	cg := &callGate{c: activity.GetClient(ctx), wf: info.WorkflowExecution.ID, run: info.WorkflowExecution.RunID,
		attempt: info.Attempt, timeout: timeout}
	cg.g = &gate.Gate{Responder: cg, Bridge: exe, Timeout: timeout + gateMargin}
	return cg, nil
}

// take is engine.Deps.Decisions: the decisions made since it last ran.
func (cg *callGate) take() []loop.GateDecision {
	cg.mu.Lock()
	defer cg.mu.Unlock()
	out := cg.log
	cg.log = nil
	return out
}

func (cg *callGate) record(r *loop.GateDecision) {
	if r == nil {
		return
	}
	cg.mu.Lock()
	defer cg.mu.Unlock()
	if len(cg.log) < 1000 {
		cg.log = append(cg.log, *r)
	}
}

// wait is how long the next ask may wait: APPROVAL_TIMEOUT, within what
// is left of MaxGateWait for the call (the activity's own limit leaves
// that much for people, and no more).
func (cg *callGate) wait() time.Duration {
	return min(cg.timeout, wf.MaxGateWait-cg.g.Waited())
}

// ask sends a to the workflow and waits for the reply.
func (cg *callGate) ask(ctx context.Context, a wf.GateAsk) (wf.GateReply, error) {
	a.Attempt, a.Timeout = cg.attempt, cg.wait()
	if a.Timeout <= 0 {
		return wf.GateReply{Expired: true}, nil
	}
	h, err := cg.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: cg.wf, RunID: cg.run, UpdateName: wf.UpdateGate,
		Args: []any{a}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return wf.GateReply{}, err
	}
	var r wf.GateReply
	err = h.Get(ctx, &r)
	return r, err
}

// Ask implements gate.Responder.
func (cg *callGate) Ask(ctx context.Context, q gate.Question) (string, error) {
	masked := gate.Question{Text: redact.String(q.Text)}
	for _, o := range q.Options {
		masked.Options = append(masked.Options, redact.String(o))
	}
	r, err := cg.ask(ctx, wf.GateAsk{Question: &masked})
	switch {
	case err != nil:
		return "", err
	case r.Expired || r.Gone:
		return "", context.DeadlineExceeded
	}
	return r.Answer, nil
}

// Approve implements gate.Responder.
func (cg *callGate) Approve(ctx context.Context, a gate.Approval) (gate.Decision, error) {
	r, err := cg.ask(ctx, wf.GateAskOf(a))
	if err != nil {
		return gate.Decision{}, err
	}
	cg.record(r.Record)
	switch {
	case r.Expired:
		return gate.TimedOut(a, cg.timeout), nil
	case r.Gone:
		return gate.Decision{}, errors.New("the call no longer waits")
	}
	return r.Decision, nil
}
