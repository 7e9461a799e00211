package temporal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"ralph/internal/engine"
)

// result waits for the workflow's outcome into out. A server that does not
// answer for a while (down, restarting, or failing its own reads) is
// waited for, as the workers wait for it: the workflow goes on without the
// daemon, and a task halted on the daemon's failure to read how it ended
// would stop being followed while its loop runs on. Only the workflow's
// own end (done, failed, cancelled, terminated) or ctx ends the wait.
func (r *Runner) result(ctx context.Context, taskID, id string, run client.WorkflowRun, out *Output) error {
	wait := 250 * time.Millisecond
	for told := false; ; told = true {
		err := run.Get(ctx, out)
		if err == nil || ctx.Err() != nil || !unanswered(err) {
			return err
		}
		if !told && r.Log != nil {
			fmt.Fprintf(r.Log, "task %s: the Temporal server does not answer (%v); waiting for its workflow's end\n", taskID, err)
		}
		if engine.SleepContext(ctx, wait) != nil {
			return err
		}
		wait = min(2*wait, 5*time.Second)
		// The latest run: the one a long loop continued as meanwhile.
		run = r.Client.GetWorkflow(ctx, id, "")
	}
}

// unanswered reports whether err says the server gave no answer (it is
// away, overloaded, or ran out of time), not how the workflow ended.
func unanswered(err error) bool {
	var (
		down *serviceerror.Unavailable
		late *serviceerror.DeadlineExceeded
		full *serviceerror.ResourceExhausted
	)
	if errors.As(err, &down) || errors.As(err, &late) || errors.As(err, &full) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}
