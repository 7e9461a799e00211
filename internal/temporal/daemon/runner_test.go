package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ralph/internal/analyze"
	wf "ralph/internal/temporal"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"ralph/internal/loop"
	"ralph/internal/serve"
	"ralph/internal/store"
	"ralph/internal/syncbuf"
	"ralph/internal/temporal/devserver"
)

// askCounter counts what the daemon asks of Temporal.
type askCounter struct {
	client.Client
	queries, watches, reads atomic.Int32
}

func (c *askCounter) QueryWorkflow(ctx context.Context, id, runID, name string, args ...any) (converter.EncodedValue, error) {
	c.queries.Add(1)
	return c.Client.QueryWorkflow(ctx, id, runID, name, args...)
}

func (c *askCounter) UpdateWorkflow(ctx context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	c.watches.Add(1)
	return c.Client.UpdateWorkflow(ctx, o)
}

func (c *askCounter) WorkflowService() workflowservice.WorkflowServiceClient {
	return &readCounter{WorkflowServiceClient: c.Client.WorkflowService(), reads: &c.reads}
}

// readCounter counts the reads of a workflow's history.
type readCounter struct {
	workflowservice.WorkflowServiceClient
	reads *atomic.Int32
}

func (r *readCounter) GetWorkflowExecutionHistory(ctx context.Context, in *workflowservice.GetWorkflowExecutionHistoryRequest, opts ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryResponse, error) {
	r.reads.Add(1)
	return r.WorkflowServiceClient.GetWorkflowExecutionHistory(ctx, in, opts...)
}

// startWorker runs the task workflow and iterate as its agent calls on
// queue until the test ends.
func startWorker(t *testing.T, c client.Client, queue string, iterate func(context.Context, wf.IterateInput) (wf.IterateOutput, error)) {
	t.Helper()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(wf.Task, workflow.RegisterOptions{Name: wf.WorkflowName})
	w.RegisterActivityWithOptions(iterate, activity.RegisterOptions{Name: wf.ActivityIterate})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

// The daemon learns how a workflow is from the workflow: it waits on the
// history and, after each decision, reads the status from the input of
// the call the decision began, as it happens; it queries nothing on a
// timer, however long the calls take, and following adds nothing to the
// workflow's history (a watch update did: a workflow task and a write of
// the server's per answer). It reads the history twice per call: when the
// call ends, and once the decision that follows is made.
func TestRunnerFollowsTheWorkflowWithoutPolling(t *testing.T) {
	srv := devserver.Start(t, filepath.Join(t.TempDir(), "temporal.db"))
	c := &askCounter{Client: srv.Client()}
	const queue = "runner-test"
	calls := 0
	iterate := func(ctx context.Context, in wf.IterateInput) (wf.IterateOutput, error) {
		calls++
		time.Sleep(2500 * time.Millisecond)
		now := time.Now().UTC().Round(0)
		it := iteration(in, now, calls == 3)
		return wf.IterateOutput{Iteration: it}, nil
	}
	startWorker(t, c.Client, queue, iterate)
	before := srv.Counters(nil)

	var mu sync.Mutex
	var saved []int
	var activities []string
	in := serve.RunIn{TaskID: "r1", Session: "a", Spec: loop.Spec{Policy: policy()}, Shutdown: make(chan struct{}),
		Save: func(st loop.State, rec *loop.Metrics) error {
			mu.Lock()
			defer mu.Unlock()
			if rec != nil {
				saved = append(saved, rec.Loop)
			}
			return nil
		},
		Status: func(s store.Status) {
			mu.Lock()
			defer mu.Unlock()
			activities = append(activities, s.LastAction)
		}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A settle long enough for any machine to decide in.
	r := &Runner{Client: c, Queue: queue, Settle: time.Second}
	res, st, err := r.RunLoop(ctx, in)
	if err != nil || !res.Reason.Success() || st.Loop != 3 {
		t.Fatalf("got %+v at loop %d, %v; want success after 3", res, st.Loop, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(saved) != 3 || saved[0] != 1 || saved[2] != 3 {
		t.Errorf("records saved for loops %v, want 1, 2, 3", saved)
	}
	executing := 0
	for _, a := range activities {
		if a == "executing" {
			executing++
		}
	}
	if executing < 3 {
		t.Errorf("the daemon saw the loop executing %d times (%v), want each of the 3 calls", executing, activities)
	}
	decisions, updates, signals := 0, 0, 0
	for it := c.Client.GetWorkflowHistory(context.Background(), wf.WorkflowID("r1"), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT); it.HasNext(); {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			decisions++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED:
			updates++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			signals++
		}
	}
	// What the server did for the three calls, as it reports it once it
	// has counted the last decision.
	cost := srv.Counters(func(c devserver.Counters) bool {
		d := c.Since(before)
		return d["client_requests/HistoryClientRespondWorkflowTaskCompleted"] >= float64(decisions) &&
			d["client_requests/HistoryClientRespondActivityTaskCompleted"] >= 3
	}).Since(before)
	t.Logf("%d queries, %d watches, %d history reads, %d decisions, %d updates, %d signals in the history; the server: %v", c.queries.Load(), c.watches.Load(), c.reads.Load(), decisions, updates, signals, cost)
	// Two for the start (the run's first events, then the first decision)
	// and two per call; a read at each of the server's writes would be
	// three per call.
	if n := c.reads.Load(); n > 2+2*3 {
		t.Errorf("the daemon read the history %d times for 3 calls; want at most 8", n)
	}
	// Each decision but the last began a call, whose input carries the
	// status; the last ended the run, whose result tells the rest.
	if q, n := c.queries.Load(), c.watches.Load(); q != 0 || n != 0 {
		t.Errorf("the daemon made %d queries and %d watches for %d decisions; want none", q, n, decisions)
	}
	// One decision to begin and one after each call: the daemon's
	// following makes none of its own, and a run it started has the
	// request and the hold in its input, unsignalled (no request changed
	// while it ran).
	if updates != 0 || signals != 0 || decisions > 4 {
		t.Errorf("the history holds %d decisions, %d updates and %d signals for 3 calls; want at most 4, none and none", decisions, updates, signals)
	}
	// The server's writes, each a transaction of its database: three a
	// call (its end, the decision's start, the decision with the next
	// call handed over at once), the run's start and end, and one to
	// spare for the server's own bookkeeping. The loop that followed its
	// workflow with a watch update and heartbeat every call made 10.4 a
	// call (scripts/temporalload, docs/temporal.md); that a short call
	// sends no heartbeat is the worker's to show (TestShortCallSendsNoHeartbeat).
	if w := cost.Writes(); w > 3*3+3+1 {
		t.Errorf("the server wrote %v times for 3 calls; want at most 13: %v", w, cost)
	}
}

// flakyResult is a client whose first run handle cannot read the
// workflow's end: the server ran out of time answering, as a dev server
// failing its own reads under load did.
type flakyResult struct {
	client.Client
	failed atomic.Bool
}

func (c *flakyResult) GetWorkflow(ctx context.Context, id, runID string) client.WorkflowRun {
	run := c.Client.GetWorkflow(ctx, id, runID)
	if c.failed.CompareAndSwap(false, true) {
		return unreadRun{run}
	}
	return run
}

type unreadRun struct{ client.WorkflowRun }

func (unreadRun) Get(context.Context, any) error {
	return serviceerror.NewDeadlineExceeded("context deadline exceeded")
}

// A server that does not answer how a workflow ended is waited for: the
// loop goes on on the workers, and the daemon must not halt a task whose
// workflow runs on (it did, "halted context deadline exceeded", for tasks
// whose loops then finished).
func TestRunnerWaitsForAnUnansweredEnd(t *testing.T) {
	srv := devserver.Start(t, filepath.Join(t.TempDir(), "temporal.db"))
	c := &flakyResult{Client: srv.Client()}
	const queue = "runner-result-test"
	iterate := func(ctx context.Context, in wf.IterateInput) (wf.IterateOutput, error) {
		now := time.Now().UTC().Round(0)
		return wf.IterateOutput{Iteration: iteration(in, now, true)}, nil
	}
	startWorker(t, c.Client, queue, iterate)
	in := serve.RunIn{TaskID: "r2", Session: "a", Spec: loop.Spec{Policy: policy()}, Shutdown: make(chan struct{}),
		Save: func(loop.State, *loop.Metrics) error { return nil }, Status: func(store.Status) {}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var log syncbuf.Buffer
	r := &Runner{Client: c, Queue: queue, Log: &log}
	res, st, err := r.RunLoop(ctx, in)
	if err != nil || !res.Reason.Success() || st.Loop != 1 {
		t.Fatalf("got %+v at loop %d, %v; want success after 1", res, st.Loop, err)
	}
	if !c.failed.Load() || !strings.Contains(log.String(), "task r2: the Temporal server does not answer") {
		t.Errorf("the first read of the end did not fail, or the daemon did not say it waited: %q", log.String())
	}
}

// policy is a loop of one agent with calls enough for any test.
func policy() loop.Policy {
	p := loop.Policy{Agents: []string{"claude"}}
	p.Limits.MaxCallsPerHour = 1000
	return p
}

// iteration is a call that changed files and goes on, or says the work is
// finished.
func iteration(in wf.IterateInput, now time.Time, finished bool) loop.Iteration {
	it := loop.Iteration{Loop: in.State.Loop + 1, Started: now, Ended: now, InRepo: true, Changed: true, Files: 1,
		Observed: loop.Observed{Status: analyze.StatusInProgress, FilesModified: 1, Summary: "working"}}
	if finished {
		it.Observed.Status, it.Observed.ExitSignal, it.Observed.ExitSignalExplicit, it.Observed.CompletionIndicators = analyze.StatusComplete, true, true, 2
	}
	return it
}
