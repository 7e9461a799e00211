package engine

import (
	"context"

	"ralph/internal/loop"
	"ralph/internal/scarce"
	"ralph/internal/store"
)

// A full disk or a process out of file descriptors says nothing about the
// agent's work: the same write or the same start succeeds once space or
// descriptors return. So the engine neither halts nor folds a failed
// iteration for it: it shows the wait (status "waiting: disk full writing
// …; retrying"), sleeps scarce.Backoff and tries again. What was saved is
// whole (every write is atomic), and what failed is redone, never counted
// twice: a state save is retried in place with the same record, an agent
// call that could not start or log its output is not folded and is made
// again. Only the end of ctx (Ctrl-C, a cancelled task) gives up.

// retry runs fn until it succeeds, fails for another reason, or ctx ends
// while it lacks resources; what says what fn does when its error names no
// file ("saving the state").
func (e *Engine) retry(ctx context.Context, what string, fn func() error) error {
	for {
		err := fn()
		if err == nil {
			e.recovered()
			return nil
		}
		if scarce.Of(err) == "" || ctx.Err() != nil {
			return err
		}
		if e.holdOn(ctx, err, what) != nil {
			return err
		}
	}
}

// holdOn shows that the loop waits for resources after err and sleeps the
// next back-off; the error is ctx's when it ended meanwhile.
func (e *Engine) holdOn(ctx context.Context, err error, what string) error {
	d := scarce.Backoff(e.short)
	e.short++
	why := scarce.Reason(err, what)
	until := e.now().Add(d)
	e.status("waiting", "waiting: "+why, "", &store.Wait{Kind: loop.WaitResources, Until: until, Reason: why}, "")
	if why != e.shortWhy {
		// Said once per cause, not at every retry of an hours-long wait.
		e.emit(loop.Event{Type: loop.EventWait, WaitKind: loop.WaitResources, Until: until, Message: why})
		e.shortWhy = why
	}
	return e.deps.Sleep(ctx, d)
}

// recovered ends a wait for resources, if one was on.
func (e *Engine) recovered() {
	if e.short == 0 {
		return
	}
	e.short, e.shortWhy = 0, ""
	e.status("running", "resumed", "", nil, "")
	e.emit(loop.Event{Type: loop.EventResumed, Message: "resumed: the machine has the disk space and file descriptors again"})
}
