package engine

import (
	"context"
	"time"

	"ralph/internal/loop"
)

// Turns bound how many of a host's loops do their own work at once (the
// work between agent calls: git, the analysis, the store). A daemon's loops
// share its Ps with its API; loops that all want a P at once queue every
// request behind them.
type Turns struct{ c chan struct{} }

// NewTurns lets n loops work at once.
func NewTurns(n int) *Turns { return &Turns{c: make(chan struct{}, max(n, 1))} }

// take waits for the engine's turn (nil Turns: always its turn).
func (e *Engine) take(ctx context.Context) error {
	if e.deps.Turns == nil || e.turn {
		return nil
	}
	select {
	case e.deps.Turns.c <- struct{}{}:
		e.turn = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// give ends the engine's turn, before it waits for anything but the CPU.
func (e *Engine) give() {
	if e.turn {
		<-e.deps.Turns.c
		e.turn = false
	}
}

// giveWhileWaiting makes the engine's sleeps and verify runs give its turn
// back for as long as they last.
func (e *Engine) giveWhileWaiting() {
	if e.deps.Turns == nil {
		return
	}
	sleep, verify := e.deps.Sleep, e.deps.Verify
	e.deps.Sleep = func(ctx context.Context, d time.Duration) error {
		e.give()
		if err := sleep(ctx, d); err != nil {
			return err
		}
		return e.take(ctx)
	}
	if verify != nil {
		e.deps.Verify = func(ctx context.Context) loop.VerifyRun {
			e.give()
			defer e.take(ctx)
			return verify(ctx)
		}
	}
}
