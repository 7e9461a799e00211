package loop

import (
	"context"
	"errors"
	"time"

	"ralph/internal/control"
)

// Controller is where a person's pause and stop requests arrive (the
// monitor's keys, `ralph pause|resume|stop`); control.File implements it.
type Controller interface {
	Read() (control.Request, error)
	ClearStop() error
}

// errStopRequested ends a wait early because somebody asked the loop to
// stop; it is not an interrupt (no Ctrl-C), though it ends the run the same way.
var errStopRequested = errors.New("stop requested")

// pollEvery is how often a wait or a pause looks at the request file: often
// enough that a stop feels immediate, rare enough to cost nothing.
const pollEvery = time.Second

func (e *Engine) request() control.Request {
	if e.deps.Control == nil {
		return control.Request{}
	}
	r, err := e.deps.Control.Read()
	if err != nil {
		e.emit(Event{Type: EventWarning, Message: "control request: " + err.Error()})
	}
	return r
}

// obeyControl runs before every iteration: it ends the run on a stop
// request and holds it while paused. done is set when the run is over.
func (e *Engine) obeyControl(ctx context.Context) (res Result, done bool, err error) {
	r := e.request()
	if r.Stop {
		res, err = e.stopRequested(r)
		return res, true, err
	}
	if !r.Pause {
		return Result{}, false, nil
	}
	e.writeStatus("paused", "", nil)
	e.emit(Event{Type: EventPaused, Message: "paused by " + orSomebody(r.PauseBy) + "; `ralph resume` (or p in the monitor) continues"})
	for {
		if err := e.deps.Sleep(ctx, pollEvery); err != nil {
			res, err = e.interrupted()
			return res, true, err
		}
		r = e.request()
		if r.Stop {
			res, err = e.stopRequested(r)
			return res, true, err
		}
		if !r.Pause {
			e.emit(Event{Type: EventResumed, Message: "resumed"})
			return Result{}, false, nil
		}
	}
}

func (e *Engine) stopRequested(r control.Request) (Result, error) {
	if err := e.deps.Control.ClearStop(); err != nil {
		e.emit(Event{Type: EventWarning, Message: "control request: " + err.Error()})
	}
	if e.deps.Sessions != nil {
		_ = e.deps.Sessions.Reset("interrupted", e.st.Loop, e.deps.Now())
	}
	return e.finish(ReasonInterrupted, "stopped on request by "+orSomebody(r.StopBy))
}

func orSomebody(by string) string {
	if by == "" {
		return "a request"
	}
	return by
}

// sleep waits d, looking for a stop request while it does: a usage-limit
// wait can last hours, and `ralph stop` must not have to wait it out.
func (e *Engine) sleep(ctx context.Context, d time.Duration) error {
	if e.deps.Control == nil {
		return e.deps.Sleep(ctx, d)
	}
	for d > 0 {
		step := min(d, pollEvery)
		if err := e.deps.Sleep(ctx, step); err != nil {
			return err
		}
		d -= step
		if e.request().Stop {
			return errStopRequested
		}
	}
	return ctx.Err()
}

// endWait ends the run after a wait was cut short.
func (e *Engine) endWait(err error) (Result, error) {
	if errors.Is(err, errStopRequested) {
		return e.stopRequested(e.request())
	}
	return e.interrupted()
}
