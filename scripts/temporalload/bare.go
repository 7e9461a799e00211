package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"ralph/internal/servetest"
	rtemporal "ralph/internal/temporal"
	"ralph/internal/temporal/daemon"
)

// The "bare" backend is the least a loop of agent calls can cost on
// Temporal: as many tasks and calls as the other backends, of durations
// drawn from the same range, each call one activity that only sleeps,
// decided by a workflow that only counts, followed by a reader of each
// history as the daemon follows it (a long poll, and a tenth of a second's
// wait for a decision). No ralph runs: what the dev server spends here it
// spends for any design with an activity per call that a daemon watches,
// so its CPU per iteration against the local backend's whole iteration
// bounds the ratio from below. The payloads are the size of ralph's own: a
// call's input as its workflow sends it halfway through a task, and its
// output.
const (
	bareInputBytes  = 8000
	bareOutputBytes = 1400
	bareQueue       = "bare"
)

type bareCall struct {
	Sleep time.Duration `json:"sleep"`
	Data  string        `json:"data"`
}

func bareWorkflow(ctx workflow.Context, calls []time.Duration) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute, HeartbeatTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 3},
	})
	n := 0
	for _, d := range calls {
		var out string
		if err := workflow.ExecuteActivity(ctx, "bare.call", bareCall{Sleep: d, Data: strings.Repeat("x", bareInputBytes)}).Get(ctx, &out); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func bareActivity(ctx context.Context, in bareCall) (string, error) {
	select {
	case <-time.After(in.Sleep):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return strings.Repeat("y", bareOutputBytes), nil
}

func (r *rig) bare(base string, update bool) error {
	l, err := newLauncher(base, os.Environ())
	if err != nil {
		return err
	}
	defer l.stop()
	addr, metricsPort, err := startServer(base, l)
	if err != nil {
		return err
	}
	server := l.procs[0].cmd
	// Dialled as ralph dials: no gzip to a frontend on this machine.
	dial := func() (client.Client, error) { return rtemporal.Dial(rtemporal.Conn{Address: addr}, "", nil) }
	var c client.Client
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if c, err = dial(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the dev server did not answer: %w; see %s", err, l.log.Name())
		}
	}
	defer c.Close()
	// As many workers as ralph's, each with a connection of its own, as
	// each of ralph's is a process, and as many polls for decisions.
	for range *workers {
		wc, err := dial()
		if err != nil {
			return err
		}
		defer wc.Close()
		w := worker.New(wc, bareQueue, worker.Options{MaxConcurrentActivityExecutionSize: *tasks, MaxConcurrentWorkflowTaskPollers: 8})
		w.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: "bare.task"})
		w.RegisterActivityWithOptions(bareActivity, activity.RegisterOptions{Name: "bare.call"})
		w.RegisterWorkflowWithOptions(bareUpdateWorkflow, workflow.RegisterOptions{Name: "bare.utask"})
		w.RegisterActivityWithOptions(bareCalls, activity.RegisterOptions{Name: "bare.calls"})
		if err := w.Start(); err != nil {
			return err
		}
		defer w.Stop()
	}

	cpu0, self0, m0 := servetest.CPUTime(server.Process.Pid), servetest.CPUTime(os.Getpid()), serverMetrics(metricsPort)
	began := time.Now()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, *tasks)
	wfName := "bare.task"
	if update {
		wfName = "bare.utask"
	}
	for i := range *tasks {
		calls := make([]time.Duration, *iterations)
		for j := range calls {
			calls[j] = *minCall + time.Duration(r.rnd.Int64N(int64(*maxCall-*minCall)+1))
		}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bare-%d", i), TaskQueue: bareQueue}, wfName, calls)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := follow(ctx, c, run.GetID(), run.GetRunID()); err != nil {
				errs <- err
				return
			}
			var n int
			if err := run.Get(ctx, &n); err != nil || n != *iterations {
				errs <- fmt.Errorf("workflow %s: %d calls, %v", run.GetID(), n, err)
			}
		}()
	}
	wg.Wait()
	took := time.Since(began)
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	iters := *tasks * *iterations
	server1, self1 := servetest.CPUTime(server.Process.Pid)-cpu0, servetest.CPUTime(os.Getpid())-self0
	shape := "an activity per call"
	if update {
		shape = "an update per decision"
	}
	fmt.Printf("bare Temporal, %s (no ralph): %d workflows of %d calls, %d iterations in %s\n", shape, *tasks, *iterations, iters, took.Round(100*time.Millisecond))
	for _, p := range []struct {
		name string
		cpu  time.Duration
	}{{"temporal dev server", server1}, {"SDK workers, reader", self1}} {
		fmt.Printf("  %-20s own CPU %6.1f s  (%.2f ms per iteration)\n", p.name, p.cpu.Seconds(), float64(p.cpu.Microseconds())/1000/float64(iters))
	}
	printServerMetrics(m0, serverMetrics(metricsPort), iters)
	return nil
}

// follow reads a workflow's history to its end as ralph's daemon does: a
// long poll for new events, and a pause after a page that leaves a
// decision to be made or that brought nothing.
func follow(ctx context.Context, c client.Client, id, runID string) error {
	req := &workflowservice.GetWorkflowExecutionHistoryRequest{Namespace: "default",
		Execution:    &commonpb.WorkflowExecution{WorkflowId: id, RunId: runID},
		WaitNewEvent: true, HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT, SkipArchival: true}
	deciding := false
	for {
		resp, err := c.WorkflowService().GetWorkflowExecutionHistory(ctx, req)
		if err != nil {
			return err
		}
		for _, e := range resp.GetHistory().GetEvents() {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				deciding = true
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				deciding = false
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
				return nil
			}
		}
		if len(resp.GetNextPageToken()) == 0 {
			return nil
		}
		req.NextPageToken = resp.GetNextPageToken()
		if deciding || len(resp.GetHistory().GetEvents()) == 0 {
			time.Sleep(daemon.DefaultSettle)
		}
	}
}
