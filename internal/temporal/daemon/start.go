package daemon

import (
	"context"
	"crypto/rand"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	wf "ralph/internal/temporal"
)

// start starts the task's workflow with in, or joins the run under way,
// and reports which. The SDK's ExecuteWorkflow does the same request but
// keeps the server's answer to itself; the daemon needs it to know whether
// the run has its request and hold in its input already.
func (r *Runner) start(ctx context.Context, id, queue string, in wf.Input) (client.WorkflowRun, bool, error) {
	ns := r.Namespace
	if ns == "" {
		ns = "default"
	}
	input, err := converter.GetDefaultDataConverter().ToPayloads(in)
	if err != nil {
		return nil, false, err
	}
	req := &workflowservice.StartWorkflowExecutionRequest{
		Namespace: ns, WorkflowId: id, WorkflowType: &commonpb.WorkflowType{Name: wf.WorkflowName},
		TaskQueue: &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL}, Input: input,
		// The same request again (a retry) is the same start.
		RequestId:                rand.Text(),
		WorkflowIdConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIdReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}
	// A server that is down or restarting is waited for, as the workers
	// wait for it: a task must not halt because its start met an outage.
	// The same request id makes a start that did reach the server the
	// same start.
	var resp *workflowservice.StartWorkflowExecutionResponse
	err = untilAnswered(ctx, unavailable, func(err error) {
		r.logf("task %s: the Temporal server does not answer (%v); starting its workflow when it does\n", in.TaskID, err)
	}, func() (err error) {
		resp, err = r.Client.WorkflowService().StartWorkflowExecution(ctx, req)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	// Its result follows the runs it continues as, as ExecuteWorkflow's does.
	return r.Client.GetWorkflow(ctx, id, resp.GetRunId()), resp.GetStarted(), nil
}
