package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"ralph/internal/serve"
	wf "ralph/internal/temporal"
)

// gateSync is the daemon's side of a workflow's gate: each item the
// workflow's status lists is shown on the task (serve.RemoteGate) until a
// person decides, and the decision goes back to the workflow as the decide
// update; an item the status no longer lists (its wait ran out, its call
// ended) is taken off the task.
type gateSync struct {
	c    client.Client
	wf   string
	g    serve.RemoteGate
	logf func(string, ...any)

	live map[string]context.CancelFunc
	// settled: the last status listed nothing, and the daemon was told.
	settled bool
	wg      sync.WaitGroup
}

func newGateSync(c client.Client, wf string, g serve.RemoteGate, log io.Writer) *gateSync {
	if log == nil {
		log = io.Discard
	}
	return &gateSync{c: c, wf: wf, g: g, live: map[string]context.CancelFunc{}, logf: func(format string, args ...any) {
		fmt.Fprintf(log, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
	}}
}

// sync follows the workflow's pending items (on RunLoop's goroutine).
func (s *gateSync) sync(items []wf.GateItem) {
	if s == nil {
		return
	}
	listed := map[string]bool{}
	for _, it := range items {
		listed[it.ID] = true
		if s.live[it.ID] != nil {
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.live[it.ID] = cancel
		s.wg.Go(func() { s.decide(ctx, it) })
	}
	for id, cancel := range s.live {
		if !listed[id] {
			cancel()
			delete(s.live, id)
		}
	}
	if len(items) == 0 && !s.settled {
		s.settled = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s.g.Settled(ctx)
		cancel()
	} else if len(items) > 0 {
		s.settled = false
	}
}

// decide shows it on the task, waits for a person and hands the decision
// to the workflow.
func (s *gateSync) decide(ctx context.Context, it wf.GateItem) {
	v := wf.GateVerdict{ID: it.ID}
	switch {
	case it.Question != nil:
		ans, err := s.g.Ask(ctx, it.ID, *it.Question)
		if err != nil {
			return
		}
		v.Answer = ans
	case it.Approval != nil:
		d, err := s.g.Approve(ctx, it.ID, *it.Approval)
		if err != nil {
			return
		}
		v.Allow, v.Message, v.ForTask, v.Record = d.Allow, d.Message, d.ForTask, d.Record
	default:
		return
	}
	// The decision is the person's now: it goes to the workflow even if
	// the status drops the item meanwhile (the update then says too late).
	for try := 0; try < 5; try++ {
		uctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		h, err := s.c.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{WorkflowID: s.wf, UpdateName: wf.UpdateDecide,
			Args: []any{v}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(uctx, nil)
		}
		cancel()
		if err == nil {
			return
		}
		if isRejected(err) {
			s.logf("%s: the decision on %s came too late: %v", s.wf, it.ID, err)
			return
		}
		time.Sleep(time.Second << try)
	}
	s.logf("%s: the decision on %s did not reach the workflow", s.wf, it.ID)
}

// isRejected reports an update the workflow refused (no call waits on the
// item any more), as opposed to one that did not reach it.
func isRejected(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae)
}

// stop takes every item off the task: the daemon no longer follows the
// workflow because it ended, or waits for a person between calls. A
// daemon that stops leaves them shown instead, for the next one to follow
// (serve's rejoin).
func (s *gateSync) stop() {
	if s == nil {
		return
	}
	for id, cancel := range s.live {
		cancel()
		delete(s.live, id)
	}
	s.wg.Wait()
}
