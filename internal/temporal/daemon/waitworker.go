package daemon

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"ralph/internal/loop"
	"ralph/internal/serve"
	"ralph/internal/store"
	wf "ralph/internal/temporal"
)

// A call under an account goes to that account's queue, which only the
// workers holding the account poll: with none of them up it waits there,
// scheduled and not started, for as long as it takes. The workflow cannot
// tell (it sees the call as made); the daemon asks Temporal, and shows the
// task waiting for a worker with that account, not running.

// workerGrace is how long a call may sit in its queue before the task is
// shown waiting for a worker: a worker with a free slot takes it within
// a poll.
const workerGrace = 3 * time.Second

// waitsForWorker reports whether an agent call of pending has waited
// past grace for a worker to take it (not counting a retry's backoff).
func waitsForWorker(pending []*workflowpb.PendingActivityInfo, now time.Time, grace time.Duration) bool {
	for _, p := range pending {
		if p.GetActivityType().GetName() != wf.ActivityIterate || p.GetState() != enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
			continue
		}
		since := p.GetScheduledTime().AsTime()
		if next := p.GetNextAttemptScheduleTime(); next != nil {
			since = next.AsTime()
		}
		if p.GetScheduledTime() != nil && now.Sub(since) >= grace {
			return true
		}
	}
	return false
}

// heldAccount is the account the loop's next call runs under, for the
// wait's words: its current agent's, else its first agent's with one.
func heldAccount(accounts map[string]string, st loop.State, agents []string) string {
	if a := accounts[st.Agent]; a != "" {
		return a
	}
	for _, ag := range agents {
		if a := accounts[ag]; a != "" {
			return a
		}
	}
	return ""
}

// unstarted asks Temporal whether the workflow's agent call waits for a
// worker (false when it cannot tell).
func (r *Runner) unstarted(ctx context.Context, id string) bool {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := r.Client.DescribeWorkflow(cctx, id, "")
	if err != nil || d.RawResponse == nil {
		return false
	}
	return waitsForWorker(d.RawResponse.GetPendingActivities(), time.Now(), workerGrace)
}

// noWorker shows (name "": clears) that the loop's call waits for a
// worker holding account name.
func (m *mirror) noWorker(name string) {
	if name == m.account {
		return
	}
	m.account = name
	st := store.Status{LastAction: m.activity, LoopCount: m.st.Loop, Agent: m.st.Agent}
	if name != "" {
		why := fmt.Sprintf("waiting for a worker with account %s", name)
		m.emit(loop.Event{Type: loop.EventWarning, Loop: m.st.Loop, Message: why + ": no worker holding it has taken the call (ralph worker --accounts " + name + ")"})
		st.LastAction, st.Wait = why, &store.Wait{Kind: serve.WaitWorker, Reason: why}
	}
	if m.in.Status != nil {
		m.in.Status(st)
	}
}
