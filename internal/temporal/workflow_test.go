package temporal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"ralph/internal/analyze"
	"ralph/internal/engine"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/replay"
	"ralph/internal/stop"
)

// step is one scripted call: its input and the workflow's clock.
type step = func(in IterateInput, now time.Time) (loop.Iteration, error)

// script is a fake Iterate: the iterations a loop's calls produce, in
// order, each stamped with the workflow's clock.
type script struct {
	mu    sync.Mutex
	steps []step
	calls []IterateInput
	at    []time.Time
	now   func() time.Time
}

func (s *script) iterate(ctx context.Context, in IterateInput) (loop.Iteration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, in)
	s.at = append(s.at, s.now())
	n := len(s.calls) - 1
	if n >= len(s.steps) {
		return loop.Iteration{}, errors.New("script ran out")
	}
	return s.steps[n](in, s.now().UTC().Round(0))
}

// working is an iteration that changed files and goes on.
func working(in IterateInput, now time.Time) (loop.Iteration, error) {
	return loop.Iteration{Loop: in.State.Loop + 1, Started: now, Ended: now, InRepo: true, Changed: true, Files: 1,
		Observed: loop.Observed{Status: analyze.StatusInProgress, FilesModified: 1, Summary: "working"}}, nil
}

// done is an iteration that says the work is finished.
func done(in IterateInput, now time.Time) (loop.Iteration, error) {
	it, _ := working(in, now)
	it.Observed.Status, it.Observed.ExitSignal, it.Observed.ExitSignalExplicit, it.Observed.CompletionIndicators = analyze.StatusComplete, true, true, 2
	return it, nil
}

// asking is an iteration that stops to ask a person.
func asking(in IterateInput, now time.Time) loop.Iteration {
	it, _ := working(in, now)
	it.Changed, it.Files, it.Observed.FilesModified = false, 0, 0
	it.Observed.Status, it.Observed.ClarificationNeeded = analyze.StatusNeedsClarification, true
	it.Observed.ClarificationQuestions = []string{"Which database?"}
	return it
}

func newEnv(t *testing.T, s *script) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Task, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(s.iterate, activity.RegisterOptions{Name: ActivityIterate})
	s.now = env.Now
	return env
}

func policy() loop.Policy {
	p := loop.Policy{Agents: []string{"claude"}}
	p.Limits.MaxCallsPerHour = 1000
	return p
}

func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) Output {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var out Output
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWorkflowRunsToCompletion(t *testing.T) {
	s := &script{steps: []step{working, done}}
	env := newEnv(t, s)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t1", Session: "a", Policy: policy()})
	out := result(t, env)
	if !out.Reason.Success() || out.State.Loop != 2 || len(out.Records) != 2 {
		t.Fatalf("got %s after %d loops, %d records; want success after 2", out.Reason, out.State.Loop, len(out.Records))
	}
	if s.calls[1].State.Loop != 1 || s.calls[1].State.Last.Summary != "working" {
		t.Errorf("second call got state %+v, want the first folded in", s.calls[1].State)
	}
}

// A usage limit is a durable timer: the next call comes after the reset,
// in workflow time, without a test that sleeps.
func TestWorkflowWaitsOutAUsageLimit(t *testing.T) {
	var reset time.Time
	limited := func(in IterateInput, now time.Time) (loop.Iteration, error) {
		it, _ := working(in, now)
		it.Changed, it.Files, it.Observed.FilesModified = false, 0, 0
		// The reset as an agent reports it: to the second.
		reset = now.Truncate(time.Second).Add(3 * time.Hour)
		it.Observed.UsageLimit = analyze.UsageLimit{Detected: true, Kind: "five_hour", ResetsAt: reset.Format(time.RFC3339), Message: "limit"}
		return it, nil
	}
	s := &script{steps: []step{limited, done}}
	env := newEnv(t, s)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t2", Session: "a", Policy: policy()})
	out := result(t, env)
	if !out.Reason.Success() {
		t.Fatalf("got %s, want success", out.Reason)
	}
	if len(s.at) != 2 || s.at[1].Before(reset) {
		t.Fatalf("second call at %v, want after the reset at %v", s.at, reset)
	}
}

// A stop request ends a wait at once, and the loop with interrupted.
func TestWorkflowStopSignalEndsAWait(t *testing.T) {
	s := &script{steps: []step{working, working}}
	env := newEnv(t, s)
	p := policy()
	p.Delay = time.Hour
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalControl, loop.Control{Stop: true, StopBy: "test"})
	}, 10*time.Minute)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t3", Session: "a", Policy: p})
	out := result(t, env)
	if out.Reason != reason.Interrupted || len(s.calls) != 1 {
		t.Fatalf("got %s after %d calls, want interrupted after 1", out.Reason, len(s.calls))
	}
}

// The status query shows the loop while it waits.
func TestWorkflowStatusQuery(t *testing.T) {
	s := &script{steps: []step{working, done}}
	env := newEnv(t, s)
	p := policy()
	p.Delay = time.Hour
	var got Status
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryStatus)
		if err != nil {
			t.Error(err)
			return
		}
		if err := v.Get(&got); err != nil {
			t.Error(err)
		}
	}, 30*time.Minute)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t4", Session: "a", Policy: p})
	result(t, env)
	if got.Activity != "waiting: delay" || got.State.Loop != 1 || len(got.Records) != 1 || got.WaitUntil.IsZero() {
		t.Fatalf("status during the delay = %+v", got)
	}
}

// A failed attempt (a worker that died) is retried; the iteration is
// folded once.
func TestWorkflowRetriesAFailedAttempt(t *testing.T) {
	failOnce := func(IterateInput, time.Time) (loop.Iteration, error) {
		return loop.Iteration{}, errors.New("worker lost")
	}
	s := &script{steps: []step{working, failOnce, done}}
	env := newEnv(t, s)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t5", Session: "a", Policy: policy()})
	out := result(t, env)
	if !out.Reason.Success() || out.State.Loop != 2 || len(s.calls) != 3 {
		t.Fatalf("got %s after %d loops and %d calls; want success after 2 loops, 3 calls", out.Reason, out.State.Loop, len(s.calls))
	}
	if s.calls[2].State.Loop != 1 {
		t.Errorf("the retry started from loop %d, want 1", s.calls[2].State.Loop)
	}
}

// A long loop continues as new, carrying its state.
func TestWorkflowContinuesAsNew(t *testing.T) {
	l := &looker{it: working, files: func(n int) (engine.Sight, engine.Sight) { return planSight(3, 3-n), planSight(3, 2-n) }}
	env := lookerEnv(t, l)
	seen := planSight(3, 3)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t6", Session: "a", Policy: policy(), ContinueAfter: 2, Sight: &seen})
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("got %v, want continue-as-new", err)
	}
	if len(l.calls) != 2 {
		t.Fatalf("%d calls before continuing, want 2", len(l.calls))
	}
	// The next run goes on from here: the state, what the last look saw,
	// and the status's count of changes, which a watch goes on from.
	var next Input
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	if next.State.Loop != 2 || !next.Begun || next.Sight == nil || !next.Sight.Same(planSight(3, 1)) || next.Seq == 0 {
		t.Errorf("continued with loop %d, begun %v, sight %v, seq %d", next.State.Loop, next.Begun, next.Sight, next.Seq)
	}
}

// A budget set by the daemon (the task's loops left) ends the loop.
func TestWorkflowHonoursTheLoopBudget(t *testing.T) {
	s := &script{steps: []step{working, working, working}}
	env := newEnv(t, s)
	p := policy()
	p.Budget.MaxLoops = 2
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t7", Session: "a", Policy: p})
	out := result(t, env)
	if out.Reason != reason.MaxLoops || len(s.calls) != 2 {
		t.Fatalf("got %s after %d calls, want max_loops after 2", out.Reason, len(s.calls))
	}
}

// A usage limit another task of the fleet saw on the same agent holds this
// loop too: it waits for the reset instead of finding out with a call.
func TestWorkflowAdoptsASharedLimit(t *testing.T) {
	s := &script{steps: []step{done}}
	env := newEnv(t, s)
	reset := env.Now().UTC().Round(0).Add(2 * time.Hour)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalLimits, map[string]loop.AgentLimit{"claude": {Until: reset, Message: "seen by session b: limit"}})
	}, 0)
	p := policy()
	p.Delay = time.Minute
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t8", Session: "a", Policy: p})
	result(t, env)
	if len(s.at) != 1 || s.at[0].Before(reset) {
		t.Fatalf("call at %v, want after the shared reset %v", s.at, reset)
	}
}

// A pinned session's calls go to its host's queue.
func TestWorkflowPinsCallsToTheHostQueue(t *testing.T) {
	var queues []string
	s := &script{}
	s.steps = []step{working, done}
	env := newEnv(t, s)
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		queues = append(queues, info.TaskQueue)
	})
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t9", Session: "a", Policy: policy(), HostQueue: "host-a"})
	result(t, env)
	if len(queues) != 2 || queues[0] != "host-a" || queues[1] != "host-a" {
		t.Fatalf("calls on queues %v, want host-a", queues)
	}
}

// Cancelling the workflow (`ralph task cancel`) ends a wait at once and
// the workflow as cancelled, after folding nothing more.
func TestWorkflowCancelEndsTheLoop(t *testing.T) {
	s := &script{steps: []step{working, working}}
	env := newEnv(t, s)
	p := policy()
	p.Delay = time.Hour
	env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Minute)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t10", Session: "a", Policy: p})
	var canceled *temporal.CanceledError
	if err := env.GetWorkflowError(); !errors.As(err, &canceled) {
		t.Fatalf("got %v, want cancelled", err)
	}
	if len(s.calls) != 1 {
		t.Fatalf("%d calls, want 1", len(s.calls))
	}
}

// A pinned call its host does not start in time goes, with the tree's
// last snapshot, to the takeover queue; the worker that takes the tree
// over holds it from then on.
func TestWorkflowTakesATreeOverWhenItsHostIsGone(t *testing.T) {
	type call struct {
		queue string
		in    IterateInput
	}
	var calls []call
	snap := func(n int) *Snapshot {
		return &Snapshot{URL: "/srv/a.git", Ref: "refs/heads/ralph/handover/a", Commit: fmt.Sprintf("c%d", n), RC: "rc-sum"}
	}
	iterate := func(ctx context.Context, in IterateInput) (IterateOutput, error) {
		calls = append(calls, call{queue: activity.GetInfo(ctx).TaskQueue, in: in})
		now := time.Now().UTC()
		switch len(calls) {
		case 1:
			it, _ := working(in, now)
			return IterateOutput{Iteration: it, Snapshot: snap(1)}, nil
		case 2:
			// What the server reports when no worker of the host's queue
			// started the call in time.
			return IterateOutput{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		case 3:
			it, _ := working(in, now)
			return IterateOutput{Iteration: it, Snapshot: snap(3), Host: "host-b", Dir: "/takeover/a"}, nil
		}
		it, _ := done(in, now)
		return IterateOutput{Iteration: it, Snapshot: snap(len(calls))}, nil
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Task, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(iterate, activity.RegisterOptions{Name: ActivityIterate})
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t14", Session: "a", Dir: "/src/a", Policy: policy(),
		HostQueue: "host-a", Handover: &Handover{Remote: "origin", After: time.Minute}})
	out := result(t, env)
	if !out.Reason.Success() || out.State.Loop != 3 || len(calls) != 4 {
		t.Fatalf("got %s after %d loops and %d calls; want success after 3 loops, 4 calls", out.Reason, out.State.Loop, len(calls))
	}
	want := []struct {
		queue, dir, from, vouched string
	}{
		{"host-a", "/src/a", "", ""},
		{"host-a", "/src/a", "", "rc-sum"},
		{"default-test-taskqueue" + TakeoverSuffix, "/src/a", "c1", "rc-sum"},
		{"host-b", "/takeover/a", "", "rc-sum"},
	}
	for i, w := range want {
		c := calls[i]
		from := ""
		if c.in.From != nil {
			from = c.in.From.Commit
		}
		if c.queue != w.queue || c.in.Dir != w.dir || from != w.from || c.in.Vouched != w.vouched ||
			c.in.Push != "origin" || c.in.Ref != "refs/heads/ralph/handover/a" {
			t.Errorf("call %d: queue %s, dir %s, from %q, vouched %q, push %q %q; want %+v", i+1, c.queue, c.in.Dir, from, c.in.Vouched, c.in.Push, c.in.Ref, w)
		}
	}
	if calls[1].in.State.Loop != 1 || calls[2].in.State.Loop != 1 {
		t.Errorf("the call the host never started counted: loops %d then %d", calls[1].in.State.Loop, calls[2].in.State.Loop)
	}
}

// looker is a fake Iterate that looks first, as the real one does: a call
// whose Seen is not the files as they are now comes back unspent with what
// it saw; a call made returns what it sees after.
type looker struct {
	calls []IterateInput
	// files is what a look sees at the n-th call (from 0), before it and
	// after it.
	files func(n int) (before, after engine.Sight)
	it    step
}

func (l *looker) iterate(ctx context.Context, in IterateInput) (IterateOutput, error) {
	n := len(l.calls)
	l.calls = append(l.calls, in)
	before, after := l.files(n)
	if !in.Look {
		return IterateOutput{}, errors.New("the call was not asked to look")
	}
	if in.Seen == nil || !before.Same(*in.Seen) {
		return IterateOutput{Sight: &before, Unspent: true}, nil
	}
	it, err := l.it(in, time.Now().UTC())
	return IterateOutput{Iteration: it, Sight: &after, After: fmt.Sprintf("snap-%d", n)}, err
}

func lookerEnv(t *testing.T, l *looker) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Task, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(l.iterate, activity.RegisterOptions{Name: ActivityIterate})
	return env
}

func planSight(total, open int) engine.Sight {
	return engine.Sight{Plan: stop.Plan{Known: true, Total: total, Open: open}}
}

// The workflow decides with the files as the worker sees them: the first
// call looks before anything runs, and a plan a person completed between
// two calls ends the loop before the second, as in `ralph run`.
func TestWorkflowSeesThePlanEditedBetweenCalls(t *testing.T) {
	l := &looker{it: working, files: func(n int) (engine.Sight, engine.Sight) {
		switch n {
		case 0, 1:
			return planSight(2, 2), planSight(2, 1)
		}
		return planSight(2, 0), planSight(2, 0) // ticked by a person
	}}
	env := lookerEnv(t, l)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t15", Session: "a", Policy: policy()})
	out := result(t, env)
	if out.Reason != reason.PlanComplete || out.State.Loop != 1 || len(l.calls) != 3 {
		t.Fatalf("got %s after %d loops and %d calls; want plan_complete after 1 loop, 3 calls (a look, the call, a look)", out.Reason, out.State.Loop, len(l.calls))
	}
	if l.calls[0].Seen != nil || l.calls[1].Seen == nil || !l.calls[1].Seen.Same(planSight(2, 2)) || l.calls[2].Seen == nil || !l.calls[2].Seen.Same(planSight(2, 1)) {
		t.Errorf("the calls saw %v, %v, %v; want nothing, the first look, the first call's after", l.calls[0].Seen, l.calls[1].Seen, l.calls[2].Seen)
	}
}

// Each call names the snapshot the last call the workflow folded left on
// its worker, so that a worker starts from its own snapshot only when no
// call ran since; a call that came back unspent ran nothing.
func TestWorkflowTellsEachCallTheLastCallsSnapshot(t *testing.T) {
	l := &looker{it: working, files: func(n int) (engine.Sight, engine.Sight) {
		switch n {
		case 0, 1:
			return planSight(3, 3), planSight(3, 2)
		case 2: // a person ticked an item since
			return planSight(3, 1), planSight(3, 1)
		}
		return planSight(3, 1), planSight(3, 0)
	}}
	env := lookerEnv(t, l)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t17", Session: "a", Policy: policy()})
	out := result(t, env)
	if out.Reason != reason.PlanComplete || len(l.calls) != 4 {
		t.Fatalf("got %s after %d calls; want plan_complete after 4 (a look, a call, a look, a call)", out.Reason, len(l.calls))
	}
	var got []string
	for _, c := range l.calls {
		got = append(got, c.Before)
	}
	if want := []string{"", "", "snap-1", "snap-1"}; !slices.Equal(got, want) {
		t.Errorf("the calls started from %q, want %q", got, want)
	}
}

// A required file gone (the task file) stops the loop with
// integrity_failure before the agent is called.
func TestWorkflowStopsOnAMissingRequiredFile(t *testing.T) {
	l := &looker{it: working, files: func(int) (engine.Sight, engine.Sight) {
		s := planSight(0, 0)
		s.Missing = []string{"/home/handoffs/a-task.md"}
		return s, s
	}}
	env := lookerEnv(t, l)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t16", Session: "a", Policy: policy()})
	out := result(t, env)
	if out.Reason != reason.IntegrityFailure || out.State.Loop != 0 || len(l.calls) != 1 || !strings.Contains(out.Message, "a-task.md") {
		t.Fatalf("got %s (%q) after %d loops and %d calls; want integrity_failure naming the task file, no call", out.Reason, out.Message, out.State.Loop, len(l.calls))
	}
}

// A watch is answered at the next change of the status, and a new watch
// answers the one still waiting (a daemon that restarted left it), so
// they never pile up.
func TestWorkflowWatchAnswersAtTheNextChange(t *testing.T) {
	s := &script{steps: []step{working, done}}
	env := newEnv(t, s)
	p := policy()
	p.Delay = time.Hour
	type answer struct {
		at  time.Duration
		st  Status
		err error
	}
	var answers []answer
	start := env.Now()
	watch := func(after int) {
		env.UpdateWorkflow(UpdateWatch, fmt.Sprint("watch-", len(answers), after, env.Now()), &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { answers = append(answers, answer{err: err}) },
			OnComplete: func(v any, err error) {
				st, _ := v.(Status)
				answers = append(answers, answer{at: env.Now().Sub(start), st: st, err: err})
			},
		}, after)
	}
	// During the delay after the first call: its status is the last
	// change until the delay ends.
	env.RegisterDelayedCallback(func() { watch(0) }, 10*time.Minute)
	env.RegisterDelayedCallback(func() { watch(1 << 20) }, 20*time.Minute)
	env.RegisterDelayedCallback(func() { watch(1 << 20) }, 30*time.Minute)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t17", Session: "a", Policy: p})
	result(t, env)
	if len(answers) != 3 {
		t.Fatalf("%d answers, want 3", len(answers))
	}
	if a := answers[0]; a.err != nil || a.at != 10*time.Minute || a.st.Activity != "waiting: delay" || a.st.State.Loop != 1 || a.st.Seq == 0 {
		t.Errorf("the first watch: %+v, want the delay's status at once", a)
	}
	if a := answers[1]; a.err != nil || a.at != 30*time.Minute {
		t.Errorf("the second watch answered at %v (%v), want when the third came", a.at, a.err)
	}
	if a := answers[2]; a.err != nil || a.st.Activity != "stopped" {
		t.Errorf("the third watch: %+v, want the end's status", a)
	}
}

// What the daemon saw as it started the workflow is the first decision's:
// when the worker sees the same, the first call is made at once.
func TestWorkflowStartsWithTheDaemonsSight(t *testing.T) {
	l := &looker{files: func(n int) (engine.Sight, engine.Sight) {
		if n == 0 {
			return planSight(1, 1), planSight(1, 1)
		}
		return planSight(1, 1), planSight(1, 0)
	}, it: func(in IterateInput, now time.Time) (loop.Iteration, error) {
		if in.State.Loop == 1 {
			return done(in, now)
		}
		return working(in, now)
	}}
	env := lookerEnv(t, l)
	seen := planSight(1, 1)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t18", Session: "a", Policy: policy(), Sight: &seen})
	out := result(t, env)
	if !out.Reason.Success() || out.State.Loop != 2 || len(l.calls) != 2 {
		t.Fatalf("got %s after %d loops and %d calls; want success after 2 loops, 2 calls", out.Reason, out.State.Loop, len(l.calls))
	}
}

// The agent session lives in the workflow's state, as on every host: a
// call resumes the session the previous one reported, and an input from
// before the state held it (its agent_session field) is adopted.
func TestWorkflowKeepsTheAgentSessionInItsState(t *testing.T) {
	reporting := func(id string) step {
		return func(in IterateInput, now time.Time) (loop.Iteration, error) {
			it, err := working(in, now)
			it.Observed.SessionID = id
			return it, err
		}
	}
	s := &script{steps: []step{reporting("s1"), reporting("s1"), done}}
	env := newEnv(t, s)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t1", Session: "a", Policy: policy(), AgentSession: "old-1",
		State: loop.State{Version: 2}})
	out := result(t, env)
	if len(s.calls) != 3 {
		t.Fatalf("%d calls", len(s.calls))
	}
	for i, want := range []string{"old-1", "s1", "s1"} {
		if c := s.calls[i]; c.State.Session.ID != want || c.AgentSession != want {
			t.Errorf("call %d resumes %q (input field %q), want %q", i+1, c.State.Session.ID, c.AgentSession, want)
		}
	}
	if out.State.Session.ID != "" {
		t.Errorf("a finished task keeps session %q; completion forgets it", out.State.Session.ID)
	}
}

// The verify gate on Temporal: a claim goes to the Verify activity before
// it stands, as in the local engine; a failed check sends the agent back,
// told why, and MaxFailures failed claims end the run with verify_failed.
func TestWorkflowVerifiesAClaim(t *testing.T) {
	for _, tt := range []struct {
		name   string
		exits  []int
		reason reason.Reason
		calls  int
	}{
		{"fails, then passes", []int{2, 0}, reason.ProjectComplete, 2},
		{"never passes", []int{2, 2}, reason.VerifyFailed, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{steps: []step{done, done, done}}
			env := newEnv(t, s)
			var checks []VerifyInput
			env.RegisterActivityWithOptions(func(_ context.Context, in VerifyInput) (loop.VerifyRun, error) {
				code := tt.exits[len(checks)]
				checks = append(checks, in)
				return loop.VerifyRun{Command: "make test", ExitCode: code, Tail: "FAIL: TestX"}, nil
			}, activity.RegisterOptions{Name: ActivityVerify})
			p := policy()
			p.Verify = loop.VerifyPolicy{On: true, MaxFailures: 2}
			env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t1", Session: "a", Policy: p})
			out := result(t, env)
			if out.Reason != tt.reason || len(s.calls) != tt.calls || len(checks) != len(tt.exits) {
				t.Fatalf("%s after %d calls and %d checks", out.Reason, len(s.calls), len(checks))
			}
			if fix := strings.Join(s.calls[1].State.Corrections, "\n"); !strings.Contains(fix, "FAIL: TestX") {
				t.Errorf("the call after a failed check was not told: %q", fix)
			}
			last := out.Records[len(out.Records)-1]
			if last.Verify == nil || last.Verified != (tt.reason == reason.ProjectComplete) {
				t.Errorf("the last record's check: %+v verified %v", last.Verify, last.Verified)
			}
		})
	}
}

// The workflow's records keep the inputs of their decisions, as `ralph
// run`'s do, and replay to the same decisions.
func TestWorkflowRecordsReplayAsDecided(t *testing.T) {
	s := &script{steps: []step{working, done}}
	env := newEnv(t, s)
	env.ExecuteWorkflow(WorkflowName, Input{TaskID: "t1", Session: "a", Policy: policy()})
	out := result(t, env)
	var in []replay.Record
	for _, m := range out.Records {
		if m.Replay == nil || m.Replay.Next != "call:claude" || m.Replay.Iteration.Loop != m.Loop {
			t.Fatalf("record %d: replay inputs %+v", m.Loop, m.Replay)
		}
		in = append(in, replay.Record{Where: fmt.Sprint(m.Loop), Metric: m})
	}
	if rep := replay.Records(in, replay.Today()); rep.Replayed != 4 || rep.ExitCode() != 0 {
		var b strings.Builder
		replay.Print(&b, rep)
		t.Errorf("replayed:\n%s", b.String())
	}
}
