package main

import (
	"context"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The "bare-update" backend is the other shape a loop of agent calls can
// take on Temporal with its decisions still workflow code: one activity
// makes all of a task's calls, and after each it asks the workflow what to
// do next with an update, whose handler decides. The update's workflow task
// is speculative (the server writes it only with its outcome), and the
// activity, its timers and its completion are paid once per task instead
// of once per call. Measured beside "bare", it says whether that shape
// goes under the floor of an activity per call (docs/temporal.md).

// bareNext is the workflow's answer to a call's end: the next call, or
// stop.
type bareNext struct {
	Stop  bool          `json:"stop"`
	Sleep time.Duration `json:"sleep"`
	Data  string        `json:"data"`
}

// bareUpdateWorkflow counts the calls in its update handler and waits for
// the one activity that makes them.
func bareUpdateWorkflow(ctx workflow.Context, calls []time.Duration) (int, error) {
	n := 0
	if err := workflow.SetUpdateHandler(ctx, "done", func(ctx workflow.Context, out string) (bareNext, error) {
		n++
		if n >= len(calls) {
			return bareNext{Stop: true}, nil
		}
		return bareNext{Sleep: calls[n], Data: strings.Repeat("x", bareInputBytes)}, nil
	}); err != nil {
		return 0, err
	}
	// No heartbeat timeout: the activity outlives any one call, and the
	// heartbeats a real design would need to notice a dead worker would
	// only add to what this shape costs.
	var total time.Duration
	for _, d := range calls {
		total += d
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: total + 10*time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 3},
	})
	if err := workflow.ExecuteActivity(ctx, "bare.calls", bareNext{Sleep: calls[0], Data: strings.Repeat("x", bareInputBytes)}).Get(ctx, nil); err != nil {
		return n, err
	}
	return n, nil
}

// bareCalls makes the calls the workflow answers with, each its input's
// sleep, and reports each end with the size of ralph's output.
func bareCalls(ctx context.Context, next bareNext) error {
	info := activity.GetInfo(ctx)
	c := activity.GetClient(ctx)
	for !next.Stop {
		select {
		case <-time.After(next.Sleep):
		case <-ctx.Done():
			return ctx.Err()
		}
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
			UpdateName: "done", Args: []any{strings.Repeat("y", bareOutputBytes)}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return err
		}
		next = bareNext{}
		if err := h.Get(ctx, &next); err != nil {
			return err
		}
	}
	return nil
}
