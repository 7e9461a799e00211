package temporal

import (
	"context"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
)

// follow waits on the history of the workflow's latest run (a long poll
// the server answers from what it has written anyway) and asks for the
// status with a query after each decision: a workflow's status changes
// only when it decides. The watch update did the same with a workflow
// task and a write of the server's per answer; a query is neither. It
// returns when the run is over, reporting whether it continued as a new
// run (which the caller follows next), or on an error.
func (r *Runner) follow(ctx context.Context, id string, changed func()) (continued bool, err error) {
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
	for {
		resp, err := r.Client.WorkflowService().GetWorkflowExecutionHistory(ctx, req)
		if err != nil {
			return false, err
		}
		decided := false
		for _, e := range resp.GetHistory().GetEvents() {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				decided = true
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				return true, nil
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
				// The run's Output tells the rest.
				return false, nil
			}
		}
		if decided {
			// One query for all the decisions of a page: a first read of
			// a long history is a few pages, not a query per decision.
			changed()
		}
		if len(resp.GetNextPageToken()) == 0 {
			return false, nil
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}
