package daemon

import (
	"context"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"ralph/internal/engine"
	wf "ralph/internal/temporal"
)

// follow waits on the history of the workflow's latest run (a long poll
// the server answers from what it has written anyway) and learns the
// status after each decision: a workflow's status changes only when it
// decides. A decision that begins a call carries the status in the call's
// input (versionCallStatus), which tell passes on, in the history's
// order; after any other decision (a wait, a check, an answer, a run from
// before that version) changed asks for it with a query. The watch update
// did the same with a workflow task and a write of the server's per
// answer; neither a query nor reading the history is one. It returns when
// the run is over, reporting whether it continued as a new run (which the
// caller follows next), or on an error.
func (r *Runner) follow(ctx context.Context, id string, changed func(), tell func(wf.Status)) (continued bool, err error) {
	ns := r.Namespace
	if ns == "" {
		ns = "default"
	}
	d, err := r.Client.DescribeWorkflow(ctx, id, "")
	if err != nil {
		return false, err
	}
	if d.RawResponse == nil {
		return false, fmt.Errorf("workflow %s: described without its execution", id)
	}
	run := d.RawResponse.GetWorkflowExecutionInfo().GetExecution()
	req := &workflowservice.GetWorkflowExecutionHistoryRequest{Namespace: ns,
		Execution:    &commonpb.WorkflowExecution{WorkflowId: id, RunId: run.GetRunId()},
		WaitNewEvent: true, HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT, SkipArchival: true}
	// deciding: the history's last decision is not made yet.
	deciding := false
	for {
		resp, err := r.Client.WorkflowService().GetWorkflowExecutionHistory(ctx, req)
		if err != nil {
			return false, err
		}
		// untold: a decision of this page whose status no call's input
		// carried.
		untold := false
		for _, e := range resp.GetHistory().GetEvents() {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				deciding = true
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				untold, deciding = true, false
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if s := callStatus(e.GetActivityTaskScheduledEventAttributes()); s != nil && untold {
					tell(*s)
					untold = false
				}
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				return true, nil
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
				// The run's Output tells the rest.
				return false, nil
			}
		}
		if untold {
			// One query for all the untold decisions of a page: a first
			// read of a long history is a few pages, not a query per
			// decision.
			changed()
		}
		if len(resp.GetNextPageToken()) == 0 {
			return false, nil
		}
		req.NextPageToken = resp.GetNextPageToken()
		if deciding || len(resp.GetHistory().GetEvents()) == 0 {
			// A call's end (or a signal) woke this poll and the decision
			// it asks for comes within moments: waiting for it makes one
			// read of the decision's start and end instead of a wake for
			// each, which is the server's and the daemon's work per
			// iteration (scripts/temporalload). A poll that came back
			// with nothing waits too, so that no answer of the server's
			// can make the daemon read in a tight loop.
			if err := engine.SleepContext(ctx, r.settle()); err != nil {
				return false, err
			}
		}
	}
}

// DefaultSettle is how long the daemon lets a decision be made before it
// reads the history again (Runner.Settle).
const DefaultSettle = 100 * time.Millisecond

func (r *Runner) settle() time.Duration {
	if r.Settle > 0 {
		return r.Settle
	}
	return DefaultSettle
}

// callStatus is the status an agent call's input carries (nil: none, or
// not an agent call).
func callStatus(a *historypb.ActivityTaskScheduledEventAttributes) *wf.Status {
	if a.GetActivityType().GetName() != wf.ActivityIterate {
		return nil
	}
	var in struct {
		Status *wf.Status `json:"status"`
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in); err != nil {
		return nil
	}
	return in.Status
}
