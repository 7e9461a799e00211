package temporal

import (
	"context"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/types/known/timestamppb"

	"ralph/internal/account"
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

// A worker runs a call under an account it holds with that account's
// login, and refuses one under an account it does not hold, at once: it
// would run under whatever login the machine has.
func TestIterateRunsUnderTheHeldAccountOnly(t *testing.T) {
	acts := &Activities{Home: t.TempDir(), Accounts: map[string]account.Account{
		"spare": {Name: "spare", Agent: "claude", ConfigDir: "/srv/spare"}}}
	env, err := acts.accountEnv("spare")
	if err != nil || env == nil {
		t.Fatalf("held account: %v", err)
	}
	if got, _ := env("claude"); len(got) != 1 || got[0] != "CLAUDE_CONFIG_DIR=/srv/spare" {
		t.Errorf("claude's call: %v", got)
	}
	if got, _ := env("codex"); got != nil {
		t.Errorf("another agent's call: %v, want none", got)
	}
	if env, err := acts.accountEnv(""); env != nil || err != nil {
		t.Errorf("no account: %v", err)
	}
	var suite testsuite.WorkflowTestSuite
	aenv := suite.NewTestActivityEnvironment()
	aenv.RegisterActivityWithOptions(acts.Iterate, activity.RegisterOptions{Name: ActivityIterate})
	_, err = aenv.ExecuteActivity(ActivityIterate, IterateInput{TaskID: "t1", Session: "a", Dir: t.TempDir(), Account: "work"})
	if err == nil || !strings.Contains(err.Error(), "account work: this worker does not hold it") {
		t.Errorf("a call under an account not held: %v", err)
	}
}

func TestWaitsForWorker(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(now.Add(-d)) }
	pending := func(name string, st enumspb.PendingActivityState, scheduled, next *timestamppb.Timestamp) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: name}, State: st,
			ScheduledTime: scheduled, NextAttemptScheduleTime: next}
	}
	sched, started := enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, enumspb.PENDING_ACTIVITY_STATE_STARTED
	for _, c := range []struct {
		name    string
		pending []*workflowpb.PendingActivityInfo
		want    bool
	}{
		{"none", nil, false},
		{"scheduled long ago", []*workflowpb.PendingActivityInfo{pending(ActivityIterate, sched, at(time.Minute), nil)}, true},
		{"just scheduled", []*workflowpb.PendingActivityInfo{pending(ActivityIterate, sched, at(time.Second), nil)}, false},
		{"started", []*workflowpb.PendingActivityInfo{pending(ActivityIterate, started, at(time.Minute), nil)}, false},
		{"a retry's backoff", []*workflowpb.PendingActivityInfo{pending(ActivityIterate, sched, at(time.Minute), at(-time.Second))}, false},
		{"a retry waiting", []*workflowpb.PendingActivityInfo{pending(ActivityIterate, sched, at(time.Minute), at(time.Minute))}, true},
		{"a verify run", []*workflowpb.PendingActivityInfo{pending(ActivityVerify, sched, at(time.Minute), nil)}, false},
	} {
		if got := waitsForWorker(c.pending, now, workerGrace); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
