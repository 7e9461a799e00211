package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"ralph/internal/gate"
	"ralph/internal/loop"
	"ralph/internal/redact"
	"ralph/internal/serve"
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
	return min(cg.timeout, MaxGateWait-cg.g.Waited())
}

// ask sends a to the workflow and waits for the reply.
func (cg *callGate) ask(ctx context.Context, a GateAsk) (GateReply, error) {
	a.Attempt, a.Timeout = cg.attempt, cg.wait()
	if a.Timeout <= 0 {
		return GateReply{Expired: true}, nil
	}
	h, err := cg.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: cg.wf, RunID: cg.run, UpdateName: UpdateGate,
		Args: []any{a}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return GateReply{}, err
	}
	var r GateReply
	err = h.Get(ctx, &r)
	return r, err
}

// gateAskOf is the ask for a tool call as the workflow keeps it: masked,
// with the SHA-256 of the exact call and of the grant that would cover it,
// so that neither a secret in a command nor the command itself is history
// while the same call is still known again.
func gateAskOf(a gate.Approval) GateAsk {
	masked := a
	masked.Input = redact.JSON(a.Input)
	ga := GateAsk{Approval: &masked, What: serve.ApprovalWhat(a), Key: sha(a.Tool + "\x00" + string(a.Input))}
	if g, ok := gate.GrantFor(a); ok {
		if g.Command != "" {
			g.Command = "sha256:" + sha(g.Command)
		}
		ga.Grant = &g
	}
	return ga
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Ask implements gate.Responder.
func (cg *callGate) Ask(ctx context.Context, q gate.Question) (string, error) {
	masked := gate.Question{Text: redact.String(q.Text)}
	for _, o := range q.Options {
		masked.Options = append(masked.Options, redact.String(o))
	}
	r, err := cg.ask(ctx, GateAsk{Question: &masked})
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
	r, err := cg.ask(ctx, gateAskOf(a))
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
