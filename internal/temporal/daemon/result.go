package daemon

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
	wf "ralph/internal/temporal"
)

// untilAnswered makes try again while its error says the server gave no
// answer (retry), as the workers wait for a server that is away: the
// first such error goes to said, and the tries are 250 ms apart, doubling
// up to 5 s. It returns try's first other outcome, or what try says once
// ctx has ended.
func untilAnswered(ctx context.Context, retry func(error) bool, said func(error), try func() error) error {
	wait := 250 * time.Millisecond
	for told := false; ; told = true {
		err := try()
		if err == nil || ctx.Err() != nil || !retry(err) {
			return err
		}
		if !told {
			said(err)
		}
		_ = engine.SleepContext(ctx, wait)
		wait = min(2*wait, 5*time.Second)
	}
}

// result waits for the workflow's outcome into out. A server that does not
// answer for a while (down, restarting, or failing its own reads) is
// waited for: the workflow goes on without the daemon, and a task halted
// on the daemon's failure to read how it ended would stop being followed
// while its loop runs on. Only the workflow's own end (done, failed,
// cancelled, terminated) or ctx ends the wait.
func (r *Runner) result(ctx context.Context, taskID, id string, run client.WorkflowRun, out *wf.Output) error {
	return untilAnswered(ctx, unanswered, func(err error) {
		r.logf("task %s: the Temporal server does not answer (%v); waiting for its workflow's end\n", taskID, err)
	}, func() error {
		err := run.Get(ctx, out)
		if err != nil {
			// Next time the latest run: the one a long loop continued as
			// meanwhile.
			run = r.Client.GetWorkflow(ctx, id, "")
		}
		return err
	})
}

// logf writes to the runner's log, if it has one.
func (r *Runner) logf(format string, args ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, format, args...)
	}
}

// unavailable reports whether err says the server is away.
func unavailable(err error) bool {
	var down *serviceerror.Unavailable
	return errors.As(err, &down) || status.Code(err) == codes.Unavailable
}

// unanswered reports whether err says the server gave no answer (it is
// away, overloaded, or ran out of time), not how the workflow ended.
func unanswered(err error) bool {
	var (
		late *serviceerror.DeadlineExceeded
		full *serviceerror.ResourceExhausted
	)
	if unavailable(err) || errors.As(err, &late) || errors.As(err, &full) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}
