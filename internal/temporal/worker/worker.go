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
	registerCalls(w, acts)
}

// registerCalls puts the activities alone on w: a worker of agent calls
// and verify runs that makes no decisions.
func registerCalls(w sdkworker.Registry, acts *Activities) {
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
	var stops []func()
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	start := func(w sdkworker.Worker) error {
		if err := w.Start(); err != nil {
			return err
		}
		stops = append(stops, w.Stop)
		return nil
	}
	// Pollers enough that a decision finds one waiting: one the server
	// cannot hand over at once it writes to its database and reads back
	// (scripts/temporalload: 1.8 such writes per iteration with the
	// default two, 0.3 with eight). A waiting poll costs a connection's
	// stream, not CPU.
	w := sdkworker.New(c, queue, sdkworker.Options{MaxConcurrentActivityExecutionSize: calls, Identity: o.Identity,
		MaxConcurrentWorkflowTaskPollers: workflowPollers})
	Register(w, o.Activities)
	if err := start(w); err != nil {
		return err
	}
	// The host's queue, each held account's and the takeover queue get
	// agent calls only: the decisions stay on the shared queue, so any
	// worker can make them, while a call runs where its tree or its
	// account's login is. The takeover queue has the calls of sessions
	// whose host stopped answering.
	var only []string
	if o.HostQueue != "" {
		only = append(only, o.HostQueue)
	}
	for _, name := range o.Accounts {
		only = append(only, wf.AccountQueue(queue, name))
	}
	if o.Activities.TakeoverDir != "" {
		only = append(only, queue+wf.TakeoverSuffix)
	}
	for _, q := range only {
		cw := sdkworker.New(c, q, sdkworker.Options{MaxConcurrentActivityExecutionSize: calls, Identity: o.Identity,
			DisableWorkflowWorker: true})
		registerCalls(cw, o.Activities)
		if err := start(cw); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}
