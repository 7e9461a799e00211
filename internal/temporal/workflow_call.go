package temporal

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"ralph/internal/gitx"
	"ralph/internal/loop"
)

// An iteration in the workflow: the agent's call as an activity, its
// account, and the verify run that checks a claim of completion.

// iterate runs one call. A pinned call its host does not start in time,
// when the tree has a snapshot to take over from, goes to the takeover
// queue: the worker that runs it holds the tree from then on.
func (w *run) iterate(ctx workflow.Context, agent int) (IterateOutput, error) {
	out, err := w.call(ctx, agent)
	var te *temporal.TimeoutError
	if err != nil && errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START && w.snap != nil && !w.adrift {
		workflow.GetLogger(ctx).Warn("the session's host did not start the call: a takeover worker runs it", "host", w.host)
		w.adrift = true
		out, err = w.call(ctx, agent)
	}
	if err != nil {
		return out, fmt.Errorf("iteration %d: %w", w.st.Loop+1, err)
	}
	if out.Snapshot != nil {
		w.snap = out.Snapshot
	}
	if w.adrift && out.Host != "" {
		w.host, w.dir, w.adrift = out.Host, out.Dir, false
	}
	return out, nil
}

// call runs the Iterate activity: it heartbeats, so a dead worker's call
// is retried elsewhere; what it returns is small plain data.
func (w *run) call(ctx workflow.Context, agent int) (IterateOutput, error) {
	in := w.in
	timeout := in.Timeout
	if timeout <= 0 {
		timeout = DefaultIterationTimeout
	}
	hb := in.Heartbeat
	if hb <= 0 {
		hb = DefaultHeartbeat
	}
	attempts := in.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	opts := workflow.ActivityOptions{
		TaskQueue: w.host,
		// The agent's own timeout plus room to measure the call.
		StartToCloseTimeout: timeout + 5*time.Minute,
		HeartbeatTimeout:    hb,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: int32(attempts),
			NonRetryableErrorTypes: []string{ErrConfig}},
	}
	ci := IterateInput{TaskID: in.TaskID, Session: in.Session, Dir: w.dir, TaskFile: in.TaskFile, Prompt: in.Prompt,
		Agent: agent, State: w.st, AgentSession: w.st.Session.ID, Confined: in.Confined, Look: w.look, Seen: w.sight,
		MaxBudgetUSD: w.hold.LeftUSD(w.st)}
	if name := w.account(agent); name != "" {
		// The account's workers only: its login is theirs. A pinned
		// session's host must hold it itself.
		ci.Account = name
		if w.host == "" {
			opts.TaskQueue = AccountQueue(workflow.GetInfo(ctx).TaskQueueName, name)
		}
	}
	if h := in.Handover; h != nil {
		ci.Push, ci.Ref = h.Remote, gitx.HandoverPrefix+in.Session
		if w.snap != nil {
			ci.Vouched = w.snap.RC
			if w.host != "" && h.After > 0 {
				opts.ScheduleToStartTimeout = h.After
			}
		}
		if w.adrift {
			opts.TaskQueue, opts.ScheduleToStartTimeout = workflow.GetInfo(ctx).TaskQueueName+TakeoverSuffix, 0
			ci.From = w.snap
		}
	}
	if w.gated {
		// A call waiting for a person is not a call running out of time:
		// its own limit leaves the waits out, and so must its activity's.
		ci.Gate = true
		opts.StartToCloseTimeout += MaxGateWait
	}
	w.publish()
	if w.tell {
		ci.Status = w.callStatus()
	}
	ci.Before = w.after
	var out IterateOutput
	w.calling = true
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), ActivityIterate, ci).Get(ctx, &out)
	w.calling = false
	w.endCall()
	switch {
	case err != nil:
		w.after = ""
	case !out.Unspent:
		w.after = out.After
	}
	return out, err
}

// callStatus is the status as a call begins, for its input, with the
// records no call's input has carried yet: the daemon reads every call's
// input in order, so it has the older ones.
func (w *run) callStatus() *Status {
	s := w.published
	var recs []loop.Metrics
	for _, r := range s.Records {
		if r.Loop > w.told {
			recs = append(recs, r)
			w.told = r.Loop
		}
	}
	s.Records = recs
	return &s
}

// account is the account the daemon chose for the loop's calls of its
// agent at index agent ("": none, the worker's own login).
func (w *run) account(agent int) string {
	if agent < 0 || agent >= len(w.policy.Agents) {
		return ""
	}
	return w.in.Accounts[w.policy.Agents[agent]]
}

// check runs the Verify activity on a claimed success and folds its run
// with loop.Checked, as the local engine does: the same gate on both
// hosts. The run is where the session's calls run.
func (w *run) check(ctx workflow.Context, claim loop.Decision) (loop.Decision, error) {
	w.activity, w.until = "verifying", time.Time{}
	w.publish()
	opts := workflow.ActivityOptions{
		TaskQueue: w.host,
		// VERIFY_TIMEOUT bounds the command itself on the worker.
		StartToCloseTimeout: verifyCloseTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: 3, NonRetryableErrorTypes: []string{ErrConfig}},
	}
	in := VerifyInput{TaskID: w.in.TaskID, Session: w.in.Session, Dir: w.dir, Confined: w.in.Confined}
	if w.snap != nil && w.in.Handover != nil {
		in.Vouched = w.snap.RC
	}
	var run loop.VerifyRun
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), ActivityVerify, in).Get(ctx, &run); err != nil {
		if ctx.Err() != nil {
			return loop.Decision{}, temporal.NewCanceledError()
		}
		// A check that could not run fails the claim; the agent is told.
		run = loop.VerifyRun{Command: "VERIFY_CMD", ExitCode: -1, StartErr: err.Error()}
	}
	w.lastRun = &run
	var d loop.Decision
	w.st, d = loop.Checked(w.st, claim, run, w.policy)
	return d, nil
}

// verifyCloseTimeout bounds one Verify activity: VERIFY_TIMEOUT's default
// with room to spare; a longer VERIFY_TIMEOUT is cut here.
const verifyCloseTimeout = 30 * time.Minute
