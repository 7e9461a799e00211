package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"ralph/internal/analyze"
	"ralph/internal/engine"
	"ralph/internal/gate"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/stop"
	"ralph/internal/temporal/devserver"
)

var update = flag.Bool("update", false, "record testdata/history-*.json on a dev server")

// Every recorded history replays through today's workflow code: a change
// that would break running workflows (a new activity, a timer moved, a
// decision changed) fails here and needs a workflow.GetVersion branch.
func TestReplayRecordedHistories(t *testing.T) {
	files, _ := filepath.Glob("testdata/history-*.json")
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata (go test -run TestRecordHistory -update)")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(Task, workflow.RegisterOptions{Name: WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// recording is one scenario TestRecordHistory runs on a dev server: the
// calls its agent makes, what is sent to the workflow, and how it must end.
type recording struct {
	file   string
	policy func() loop.Policy
	// call returns the n-th call's iteration (n from 1).
	call func(n int, in IterateInput, now time.Time) loop.Iteration
	// send runs once the workflow has started.
	send  func(ctx context.Context, c client.Client, run client.WorkflowRun) error
	check func(out Output) error
	// input adjusts the workflow's input (nil: as it is).
	input func(in *Input)
	// output, when set, makes the call's whole answer from its iteration.
	output func(n int, it loop.Iteration) IterateOutput
	// files is what a call's look sees before the n-th call and after
	// it (nil: an open plan, unchanged), as engine.Look would.
	files func(n int) (before, after engine.Sight)
	// asks, when set, is what the n-th call asks a person through its
	// gate before it returns (the worker's callGate does it so).
	asks func(ctx context.Context, n int) error
}

// openPlan is a plan of one open task.
var openPlan = engine.Sight{Plan: stop.Plan{Known: true, Total: 1, Open: 1}}

var recordings = []recording{
	{
		// An agent call, a usage limit waited out on a durable timer, a
		// breaker reset signal, a finishing call.
		file: "history-usage-limit-reset.json",
		policy: func() loop.Policy {
			p := policy()
			p.UsageLimitWait = time.Second
			return p
		},
		call: func(n int, in IterateInput, now time.Time) loop.Iteration {
			it, _ := working(in, now)
			switch n {
			case 2:
				it.Changed, it.Files, it.Observed.FilesModified = false, 0, 0
				it.Observed.UsageLimit = analyze.UsageLimit{Detected: true, Kind: "five_hour",
					ResetsAt: now.Add(2 * time.Second).Format(time.RFC3339), Message: "limit"}
			case 3:
				it, _ = done(in, now)
			}
			return it
		},
		send: func(ctx context.Context, c client.Client, run client.WorkflowRun) error {
			return c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), SignalControl, loop.Control{ResetID: "r1", ResetBy: "test"})
		},
		check: func(out Output) error {
			if !out.Reason.Success() || out.State.Loop != 3 || out.State.ResetID != "r1" {
				return fmt.Errorf("got %s after %d loops, reset %q", out.Reason, out.State.Loop, out.State.ResetID)
			}
			return nil
		},
	},
	// history-question-ends.json is the first version's: a question ended
	// the workflow (and the answer started a new one). The *-before-look
	// files are the question-wait version's, from before the look version:
	// no call looked at the files first, none returned what it saw, and
	// the next decision read the plan from the last iteration. Of them,
	// history-plan-complete-before-look.json (a call that completed the
	// plan, and the loop ended on the plan it reported) is the one whose
	// replay fails without the look branch: the new code, finding no look
	// in it, would make another call.
	{
		// A pinned call its host never starts: after the schedule-to-start
		// timeout it runs on the takeover queue from the snapshot.
		file:   "history-takeover.json",
		policy: policy,
		input: func(in *Input) {
			in.HostQueue, in.Handover = "gone-host", &Handover{Remote: "origin", After: time.Second}
			in.Snapshot = &Snapshot{URL: "/srv/a.git", Ref: "refs/heads/ralph/handover/a", Commit: "c0", RC: "rc"}
		},
		call: func(n int, in IterateInput, now time.Time) loop.Iteration {
			it, _ := done(in, now)
			return it
		},
		output: func(n int, it loop.Iteration) IterateOutput {
			return IterateOutput{Iteration: it, Host: "host-b", Dir: "/takeover/a",
				Snapshot: &Snapshot{URL: "/srv/a.git", Ref: "refs/heads/ralph/handover/a", Commit: "c1", RC: "rc"}}
		},
		check: func(out Output) error {
			if !out.Reason.Success() || out.State.Loop != 1 || out.Host != "host-b" {
				return fmt.Errorf("got %s after %d loops on %q, want success after 1 on host-b", out.Reason, out.State.Loop, out.Host)
			}
			return nil
		},
	},
	// history-question-answered.json and its -before-look twin are version
	// 1 of question-wait: the question waited in code of its own for the
	// resume signal, and the answer started a new run.
	{
		// A question is loop.Next's wait; the answer comes with the control
		// signal and goes to the next call in the same run.
		file: "history-question-answered-in-run.json",
		policy: func() loop.Policy {
			p := policy()
			p.Answerable = true
			return p
		},
		call: func(n int, in IterateInput, now time.Time) loop.Iteration {
			switch n {
			case 2:
				return asking(in, now)
			case 3:
				it, _ := done(in, now)
				return it
			}
			it, _ := working(in, now)
			return it
		},
		// Followed as the daemon follows it: watch updates, each answered
		// at the next change.
		send: func(ctx context.Context, c client.Client, run client.WorkflowRun) error {
			return watchUntil(ctx, c, run, func(s Status) (bool, error) {
				if s.Activity != "waiting: "+loop.WaitAnswer {
					return false, nil
				}
				return true, c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), SignalControl,
					loop.Control{Answer: "SQLite.", AnswerBy: "test", AnswerTo: s.State.Ask.Loop, AnswerLoops: 5})
			})
		},
		check: func(out Output) error {
			if !out.Reason.Success() || out.State.Loop != 3 || out.State.Run.FirstLoop != 0 {
				return fmt.Errorf("got %s after %d loops (run from loop %d), want success after 3 in one run", out.Reason, out.State.Loop, out.State.Run.FirstLoop)
			}
			return nil
		},
	},
	{
		// The gate (version gate): the first call asks for a tool call,
		// which the daemon allows for the task; the second asks for it
		// again and the grant answers; then a question nobody answers
		// runs out on the handler's timer.
		file:   "history-gate.json",
		policy: policy,
		input:  func(in *Input) { in.Gate = true },
		call: func(n int, in IterateInput, now time.Time) loop.Iteration {
			if n == 2 {
				it, _ := done(in, now)
				return it
			}
			it, _ := working(in, now)
			return it
		},
		asks: func(ctx context.Context, n int) error {
			ask := GateAskOf(gate.Approval{Tool: "Bash", Input: json.RawMessage(`{"command":"make"}`)})
			ask.Timeout = time.Minute
			r, err := askGate(ctx, ask)
			if err != nil || !r.Decision.Allow || r.Record == nil {
				return fmt.Errorf("call %d: Bash(make): %+v, %v", n, r, err)
			}
			if n == 2 {
				r, err := askGate(ctx, GateAsk{Question: &gate.Question{Text: "Which?"}, Timeout: time.Second})
				if err != nil || !r.Expired {
					return fmt.Errorf("the question: %+v, %v", r, err)
				}
			}
			return nil
		},
		send: func(ctx context.Context, c client.Client, run client.WorkflowRun) error {
			return watchUntil(ctx, c, run, func(s Status) (bool, error) {
				if len(s.Pending) != 1 || s.Pending[0].Kind != GateApproval {
					return false, nil
				}
				h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
					UpdateName: UpdateDecide, Args: []any{GateVerdict{ID: s.Pending[0].ID, Allow: true, ForTask: true,
						Record: &loop.GateDecision{Item: s.Pending[0].ID, What: "Bash(make)", Outcome: "allowed for this task", Surface: "cli"}}},
					WaitForStage: client.WorkflowUpdateStageCompleted})
				if err != nil {
					return true, err
				}
				return true, h.Get(ctx, nil)
			})
		},
		check: func(out Output) error {
			if !out.Reason.Success() || out.State.Loop != 2 {
				return fmt.Errorf("got %s after %d loops, want success after 2", out.Reason, out.State.Loop)
			}
			return nil
		},
	},
	{
		// A plan ticked by a person between two calls: the second call's
		// look sees it, the call is not made, the loop ends plan_complete.
		file:   "history-plan-edited.json",
		policy: policy,
		files: func(n int) (engine.Sight, engine.Sight) {
			if n == 1 {
				return openPlan, engine.Sight{Plan: stop.Plan{Known: true, Total: 2, Open: 1}}
			}
			return engine.Sight{Plan: stop.Plan{Known: true, Total: 2}}, engine.Sight{}
		},
		call: func(n int, in IterateInput, now time.Time) loop.Iteration {
			it, _ := working(in, now)
			return it
		},
		check: func(out Output) error {
			if out.Reason != reason.PlanComplete || out.State.Loop != 1 {
				return fmt.Errorf("got %s after %d loops, want plan_complete after 1", out.Reason, out.State.Loop)
			}
			return nil
		},
	},
}

// TestRecordHistory runs every recording on a real dev server, replays
// what it recorded through today's code and, with -update, writes it to
// testdata for TestReplayRecordedHistories. Recordings of a workflow
// version that is gone are kept in testdata; their scenario here changes
// to the new behaviour.
func TestRecordHistory(t *testing.T) {
	srv := devserver.Start(t, filepath.Join(t.TempDir(), "temporal.db"))
	c, err := client.Dial(client.Options{HostPort: srv.Addr, Identity: "ralph-replay-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, rc := range recordings {
		t.Run(rc.file, func(t *testing.T) {
			queue := fmt.Sprintf("replay-%d", i)
			var mu sync.Mutex
			calls := 0
			files := rc.files
			if files == nil {
				files = func(int) (engine.Sight, engine.Sight) { return openPlan, openPlan }
			}
			iterate := func(ctx context.Context, in IterateInput) (IterateOutput, error) {
				mu.Lock()
				defer mu.Unlock()
				// The call looks first, as Activities.Iterate does.
				if before, _ := files(calls + 1); in.Look && (in.Seen == nil || !before.Same(*in.Seen)) {
					out := IterateOutput{Sight: &before, Unspent: true}
					if rc.output != nil {
						o := rc.output(calls+1, loop.Iteration{})
						out.Host, out.Dir = o.Host, o.Dir
					}
					return out, nil
				}
				calls++
				if rc.asks != nil {
					if err := rc.asks(ctx, calls); err != nil {
						return IterateOutput{}, err
					}
				}
				it := rc.call(calls, in, time.Now().UTC().Round(0))
				out := IterateOutput{Iteration: it}
				if rc.output != nil {
					out = rc.output(calls, it)
				}
				if in.Look {
					_, after := files(calls)
					out.Sight = &after
				}
				return out, nil
			}
			w := worker.New(c, queue, worker.Options{Identity: "ralph-replay-test"})
			w.RegisterWorkflowWithOptions(Task, workflow.RegisterOptions{Name: WorkflowName})
			w.RegisterActivityWithOptions(iterate, activity.RegisterOptions{Name: ActivityIterate})
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			tw := worker.New(c, queue+TakeoverSuffix, worker.Options{Identity: "ralph-replay-test", DisableWorkflowWorker: true})
			tw.RegisterActivityWithOptions(iterate, activity.RegisterOptions{Name: ActivityIterate})
			if err := tw.Start(); err != nil {
				t.Fatal(err)
			}
			defer tw.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			id := fmt.Sprintf("replay-%d", i+1)
			in := Input{TaskID: id, Session: "a", Dir: "/src/a", TaskFile: "/home/handoffs/a-task.md", Prompt: "# Task", Policy: rc.policy()}
			if rc.input != nil {
				rc.input(&in)
			}
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: WorkflowID(id), TaskQueue: queue}, WorkflowName, in)
			if err != nil {
				t.Fatal(err)
			}
			if rc.send != nil {
				if err := rc.send(ctx, c, run); err != nil {
					t.Fatal(err)
				}
			}
			var out Output
			if err := run.Get(ctx, &out); err != nil {
				t.Fatal(err)
			}
			if err := rc.check(out); err != nil {
				t.Fatal(err)
			}
			data := history(t, ctx, c, run)
			// What was just recorded replays too.
			tmp := filepath.Join(t.TempDir(), "history.json")
			if err := os.WriteFile(tmp, data, 0o644); err != nil {
				t.Fatal(err)
			}
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(Task, workflow.RegisterOptions{Name: WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, tmp); err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(filepath.Join("testdata", rc.file), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// askGate asks the activity's workflow, as the worker's callGate does.
func askGate(ctx context.Context, a GateAsk) (GateReply, error) {
	info := activity.GetInfo(ctx)
	a.Attempt = info.Attempt
	h, err := activity.GetClient(ctx).UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: info.WorkflowExecution.ID,
		RunID: info.WorkflowExecution.RunID, UpdateName: UpdateGate, Args: []any{a}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return GateReply{}, err
	}
	var r GateReply
	err = h.Get(ctx, &r)
	return r, err
}

// history is a run's history as JSON, without the recording host's name.
func history(t *testing.T, ctx context.Context, c client.Client, run client.WorkflowRun) []byte {
	t.Helper()
	var h historypb.History
	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, 0)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	// The sticky queue's name holds the host's: not for the repository.
	if host, err := os.Hostname(); err == nil && host != "" {
		data = bytes.ReplaceAll(data, []byte(`"`+host+`:`), []byte(`"host:`))
	}
	return data
}

// watchUntil follows a run as the daemon did with watch updates, each
// answered at the next change, and hands every status to act until it
// says it is done.
func watchUntil(ctx context.Context, c client.Client, run client.WorkflowRun, act func(Status) (done bool, err error)) error {
	after := 0
	for {
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
			UpdateName: UpdateWatch, Args: []any{after}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return err
		}
		var s Status
		if err := h.Get(ctx, &s); err != nil {
			return err
		}
		if done, err := act(s); done || err != nil {
			return err
		}
		after = s.Seq
	}
}
