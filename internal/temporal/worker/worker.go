// Package worker is `ralph worker`: it runs the task workflows (package
// temporal) and their activities, the agent calls and verify runs, on the
// machine that holds the session's tree, under its own logins.
package worker

import (
	"context"
	"io"

	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	wf "ralph/internal/temporal"
)

// Options configure a `ralph worker`.
type Options struct {
	Conn  wf.Conn // the Temporal frontend
	Queue string  // the task queue ("" for DefaultQueue)
	// HostQueue is this machine's own queue ("" for none): the agent calls
	// of the sessions whose working trees live here are pinned to it.
	HostQueue string
	// Accounts are the names of the accounts this worker holds
	// (Activities.Accounts): it polls each one's AccountQueue too.
	Accounts []string
	// Identity names the worker in Temporal's history (the host and pid
	// when empty).
	Identity   string
	Activities *Activities
	// MaxCalls bounds the agent calls this worker runs at once (0: 4).
	MaxCalls int
	Log      io.Writer
}

// Register puts the workflow and the activity on w under their wire names.
func Register(w sdkworker.Registry, acts *Activities) {
	w.RegisterWorkflowWithOptions(wf.Task, workflow.RegisterOptions{Name: wf.WorkflowName})
	w.RegisterActivityWithOptions(acts.Iterate, activity.RegisterOptions{Name: wf.ActivityIterate})
	w.RegisterActivityWithOptions(acts.Verify, activity.RegisterOptions{Name: wf.ActivityVerify})
}

// workflowPollers is how many polls a worker keeps waiting for decisions.
const workflowPollers = 8

// Run runs workflows and agent calls from the queue until ctx ends.
func Run(ctx context.Context, o Options) error {
	queue := o.Queue
	if queue == "" {
		queue = wf.DefaultQueue
	}
	c, err := wf.Dial(o.Conn, o.Identity, o.Log)
	if err != nil {
		return err
	}
	defer c.Close()
	calls := o.MaxCalls
	if calls <= 0 {
		calls = 4
	}
	// Pollers enough that a decision finds one waiting: one the server
	// cannot hand over at once it writes to its database and reads back
	// (scripts/temporalload: 1.8 such writes per iteration with the
	// default two, 0.3 with eight). A waiting poll costs a connection's
	// stream, not CPU.
	w := sdkworker.New(c, queue, sdkworker.Options{MaxConcurrentActivityExecutionSize: calls, Identity: o.Identity,
		MaxConcurrentWorkflowTaskPollers: workflowPollers})
	Register(w, o.Activities)
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	if o.HostQueue != "" {
		// Agent calls only: the decisions stay on the shared queue, so any
		// worker can make them.
		h := sdkworker.New(c, o.HostQueue, sdkworker.Options{MaxConcurrentActivityExecutionSize: calls, Identity: o.Identity,
			DisableWorkflowWorker: true})
		h.RegisterActivityWithOptions(o.Activities.Iterate, activity.RegisterOptions{Name: wf.ActivityIterate})
		h.RegisterActivityWithOptions(o.Activities.Verify, activity.RegisterOptions{Name: wf.ActivityVerify})
		if err := h.Start(); err != nil {
			return err
		}
		defer h.Stop()
	}
	for _, name := range o.Accounts {
		// Agent calls only, as for the host queue: the account's login is
		// this machine's, the decisions any worker's.
		aw := sdkworker.New(c, wf.AccountQueue(queue, name), sdkworker.Options{MaxConcurrentActivityExecutionSize: calls, Identity: o.Identity,
			DisableWorkflowWorker: true})
		aw.RegisterActivityWithOptions(o.Activities.Iterate, activity.RegisterOptions{Name: wf.ActivityIterate})
		aw.RegisterActivityWithOptions(o.Activities.Verify, activity.RegisterOptions{Name: wf.ActivityVerify})
		if err := aw.Start(); err != nil {
			return err
		}
		defer aw.Stop()
	}
	if o.Activities.TakeoverDir != "" {
		// The calls of sessions whose host stopped answering.
		tw := sdkworker.New(c, queue+wf.TakeoverSuffix, sdkworker.Options{MaxConcurrentActivityExecutionSize: calls, Identity: o.Identity,
			DisableWorkflowWorker: true})
		tw.RegisterActivityWithOptions(o.Activities.Iterate, activity.RegisterOptions{Name: wf.ActivityIterate})
		tw.RegisterActivityWithOptions(o.Activities.Verify, activity.RegisterOptions{Name: wf.ActivityVerify})
		if err := tw.Start(); err != nil {
			return err
		}
		defer tw.Stop()
	}
	<-ctx.Done()
	return nil
}
