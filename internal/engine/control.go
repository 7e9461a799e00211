package engine

import (
	"time"

	"ralph/internal/control"
	"ralph/internal/loop"
)

// Controller is where a person's requests arrive (the monitor's keys,
// `ralph pause|resume|stop`, `ralph circuit reset`, and in the daemon chat
// and web); control.File implements it.
type Controller interface {
	Read() (control.Request, error)
	ClearStop() error
	// ClearReset forgets the breaker-reset request id once it is applied.
	ClearReset(id string) error
}

// pollEvery is how often a wait or a pause looks at the requests: often
// enough that a stop feels immediate, rare enough to cost nothing.
const pollEvery = time.Second

func (e *Engine) request() loop.Control {
	if e.deps.Control == nil {
		return loop.Control{}
	}
	r, err := e.deps.Control.Read()
	if err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Message: "control request: " + err.Error()})
	}
	return Control(r)
}

// Control is a person's request as the core reads it.
func Control(r control.Request) loop.Control {
	return loop.Control{Pause: r.Pause, PauseBy: r.PauseBy, Stop: r.Stop, StopBy: r.StopBy,
		ResetID: r.ResetID, ResetBy: r.ResetBy, ResetWhy: r.ResetWhy, ResetSession: r.ResetSession,
		Answer: r.Answer, AnswerBy: r.AnswerBy, AnswerTo: r.AnswerTo, AnswerLoops: r.AnswerLoops}
}

// applyAnswer saves an answer Next took before the controller forgets it,
// as applyReset does: a kill in between finds the answer in the state.
// Only controllers that carry answers (the daemon's) are asked to forget.
func (e *Engine) applyAnswer(to int) {
	c, ok := e.deps.Control.(interface{ ClearAnswer(to int) error })
	if !ok {
		return
	}
	if err := e.save(nil); err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Message: "save state: " + err.Error()})
		return
	}
	if err := c.ClearAnswer(to); err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Message: "control request: " + err.Error()})
	}
}

// applySessionReset saves a session reset Next applied before forgetting
// the request, as applyReset does for the breaker. Only controllers that
// take such requests (control.File) are asked to forget them.
func (e *Engine) applySessionReset() {
	c, ok := e.deps.Control.(interface{ ClearSessionReset() error })
	if !ok {
		return
	}
	if err := e.save(nil); err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Message: "save state: " + err.Error()})
		return
	}
	if err := c.ClearSessionReset(); err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Message: "control request: " + err.Error()})
	}
}

// applyReset saves a breaker reset Next applied before forgetting the
// request, so that a kill in between applies it again rather than never.
func (e *Engine) applyReset(id string) {
	if err := e.save(nil); err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Message: "save state: " + err.Error()})
		return
	}
	if err := e.deps.Control.ClearReset(id); err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Message: "control request: " + err.Error()})
	}
}
