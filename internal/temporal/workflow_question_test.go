package temporal

import (
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"ralph/internal/loop"
	"ralph/internal/reason"
)

// A question is loop.Next's wait for the answer, with no timer: the
// answer comes with the control signal, for the loop that asked (a stale
// one is ignored), and goes to the next call in the same run, with the
// budget it brings.
func TestWorkflowWaitsForTheAnswer(t *testing.T) {
	s := &script{steps: []step{func(in IterateInput, now time.Time) (loop.Iteration, error) { return asking(in, now), nil }, done}}
	env := newEnv(t, s)
	var during Status
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalControl, loop.Control{Answer: "stale", AnswerTo: 7})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryStatus)
		if err == nil {
			err = v.Get(&during)
		}
		if err != nil {
			t.Error(err)
		}
		env.SignalWorkflow(SignalControl, loop.Control{Answer: "SQLite.", AnswerBy: "test", AnswerTo: 1, AnswerLoops: 3})
	}, 48*time.Hour)
	p := policy()
	p.Budget.MaxLoops, p.Answerable = 1, true
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t11", Session: "a", Policy: p})
	out := result(t, env)
	if during.Activity != "waiting: "+loop.WaitAnswer || !during.State.Ask.Waiting() || during.State.Ask.Questions[0] != "Which database?" {
		t.Fatalf("status while asking = %+v", during)
	}
	if !out.Reason.Success() || out.State.Loop != 2 || len(s.calls) != 2 {
		t.Fatalf("got %s after %d loops, %d calls; want success after 2", out.Reason, out.State.Loop, len(s.calls))
	}
	if got := s.at[1].Sub(s.at[0]); got < 48*time.Hour {
		t.Errorf("second call %v after the first, want after the answer (48h)", got)
	}
	if a := s.calls[1].State.Ask; a.Answer != "SQLite." || a.Loop != 1 || !s.calls[1].State.Run.StartedAt.Equal(s.calls[0].State.Run.StartedAt) {
		t.Errorf("the answered call's state: ask %+v, run %+v (want the answer, in the same run)", a, s.calls[1].State.Run)
	}
}

// Workflows started before version 2 of the question wait go on waiting
// for the resume signal, which starts a new run.
func TestWorkflowWaitsForTheResumeSignalBeforeVersion2(t *testing.T) {
	s := &script{steps: []step{func(in IterateInput, now time.Time) (loop.Iteration, error) { return asking(in, now), nil }, done}}
	env := newEnv(t, s)
	env.OnGetVersion(versionQuestionWait, workflow.DefaultVersion, 2).Return(workflow.Version(1))
	var during Status
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalResume, Resume{Asked: 7})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryStatus)
		if err == nil {
			err = v.Get(&during)
		}
		if err != nil {
			t.Error(err)
		}
		env.SignalWorkflow(SignalResume, Resume{Asked: 1, MaxLoops: 3, By: "test"})
	}, 48*time.Hour)
	p := policy()
	p.Budget.MaxLoops = 1
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t11", Session: "a", Policy: p})
	out := result(t, env)
	if during.Activity != ActivityQuestion || during.Asked != 1 || len(during.State.Last.Questions) != 1 || during.Message == "" {
		t.Fatalf("status while asking = %+v", during)
	}
	if !out.Reason.Success() || out.State.Loop != 2 || len(s.calls) != 2 {
		t.Fatalf("got %s after %d loops, %d calls; want success after 2", out.Reason, out.State.Loop, len(s.calls))
	}
}

// A stop request while the question waits ends the loop with the
// question open (in the state, for an answer to a later run); a cancel
// ends the workflow as cancelled.
func TestWorkflowQuestionEndsOnStopOrCancel(t *testing.T) {
	asks := func(in IterateInput, now time.Time) (loop.Iteration, error) { return asking(in, now), nil }
	s := &script{steps: []step{asks}}
	env := newEnv(t, s)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalControl, loop.Control{Stop: true, StopBy: "test"})
	}, time.Hour)
	p := policy() // a workflow always has a person to answer: no Answerable needed
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t12", Session: "a", Policy: p})
	if out := result(t, env); out.Reason != reason.Interrupted || !out.State.Ask.Waiting() || len(out.State.Ask.Questions) != 1 {
		t.Fatalf("after a stop: %s with ask %+v, want interrupted with the question open", out.Reason, out.State.Ask)
	}

	s = &script{steps: []step{asks}}
	env = newEnv(t, s)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t13", Session: "a", Policy: p})
	var canceled *temporal.CanceledError
	if err := env.GetWorkflowError(); !errors.As(err, &canceled) {
		t.Fatalf("after a cancel: %v, want cancelled", err)
	}

}
