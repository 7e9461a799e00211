package temporal

import (
	"context"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// A loop under an account sends its calls to that account's queue, with
// the account's name (never its login) in the call; an agent without one
// goes to the workflow's queue; a pinned session's host keeps its calls.
func TestWorkflowSendsCallsToTheAccountsQueue(t *testing.T) {
	for _, c := range []struct {
		name     string
		accounts map[string]string
		host     string
		queue    string
		account  string
	}{
		{"account", map[string]string{"claude": "spare"}, "", DefaultQueue + ".account.spare", "spare"},
		{"another agent's", map[string]string{"codex": "work"}, "", DefaultQueue, ""},
		{"none", nil, "", DefaultQueue, ""},
		{"pinned", map[string]string{"claude": "spare"}, "host-a", "host-a", "spare"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var queues []string
			s := &script{}
			s.steps = []step{working, done}
			env := newEnv(t, s)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: DefaultQueue})
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				queues = append(queues, info.TaskQueue)
			})
			env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t1", Session: "a", Policy: policy(), Accounts: c.accounts, HostQueue: c.host})
			result(t, env)
			if len(queues) != 2 || queues[0] != c.queue || queues[1] != c.queue {
				t.Errorf("calls on queues %v, want %s", queues, c.queue)
			}
			for _, in := range s.calls {
				if in.Account != c.account {
					t.Errorf("call under account %q, want %q", in.Account, c.account)
				}
			}
		})
	}
}
