package worker

import (
	"errors"
	"io"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"ralph/internal/account"
	"ralph/internal/agent"
	"ralph/internal/loop"
	wf "ralph/internal/temporal"
)

// A request's call is built confined (the sandbox), any other as usual;
// which is the daemon's word, carried in the call.
func TestIterateConfinesRequests(t *testing.T) {
	refuse := func(which string) func(string, io.Writer) (loop.Spec, []agent.Adapter, error) {
		return func(string, io.Writer) (loop.Spec, []agent.Adapter, error) {
			return loop.Spec{}, nil, errors.New(which + " build")
		}
	}
	acts := &Activities{Home: t.TempDir(), Build: refuse("plain"), BuildConfined: refuse("confined")}
	for _, confined := range []bool{false, true} {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivityWithOptions(acts.Iterate, activity.RegisterOptions{Name: wf.ActivityIterate})
		_, err := env.ExecuteActivity(wf.ActivityIterate, wf.IterateInput{TaskID: "t1", Session: "a", Dir: t.TempDir(), Confined: confined})
		want := map[bool]string{false: "plain build", true: "confined build"}[confined]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("confined %v: %v, want %q", confined, err, want)
		}
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
	aenv.RegisterActivityWithOptions(acts.Iterate, activity.RegisterOptions{Name: wf.ActivityIterate})
	_, err = aenv.ExecuteActivity(wf.ActivityIterate, wf.IterateInput{TaskID: "t1", Session: "a", Dir: t.TempDir(), Account: "work"})
	if err == nil || !strings.Contains(err.Error(), "account work: this worker does not hold it") {
		t.Errorf("a call under an account not held: %v", err)
	}
}
