package temporal

import (
	"bytes"
	"context"
	"flag"
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
	"ralph/internal/loop"
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

// TestRecordHistory runs a task's workflow on a real dev server (an agent
// call, a usage limit waited out on a durable timer, a breaker reset
// signal, a finishing call) and, with -update, records its history for
// TestReplayRecordedHistories.
func TestRecordHistory(t *testing.T) {
	srv := devserver.Start(t, filepath.Join(t.TempDir(), "temporal.db"))
	c, err := client.Dial(client.Options{HostPort: srv.Addr, Identity: "ralph-replay-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	calls := 0
	iterate := func(ctx context.Context, in IterateInput) (loop.Iteration, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		now := time.Now().UTC().Round(0)
		it, _ := working(in, now)
		switch calls {
		case 2:
			it.Changed, it.Files, it.Observed.FilesModified = false, 0, 0
			it.Observed.UsageLimit = analyze.UsageLimit{Detected: true, Kind: "five_hour",
				ResetsAt: now.Add(2 * time.Second).Format(time.RFC3339), Message: "limit"}
		case 3:
			it, _ = done(in, now)
		}
		return it, nil
	}
	w := worker.New(c, "replay", worker.Options{Identity: "ralph-replay-test"})
	w.RegisterWorkflowWithOptions(Task, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(iterate, activity.RegisterOptions{Name: ActivityIterate})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := policy()
	p.UsageLimitWait = time.Second
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: WorkflowID("replay-1"), TaskQueue: "replay"},
		WorkflowName, Input{TaskID: "replay-1", Session: "a", Dir: "/src/a", TaskFile: "/home/handoffs/a-task.md", Prompt: "# Task", Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), SignalControl, loop.Control{ResetID: "r1", ResetBy: "test"}); err != nil {
		t.Fatal(err)
	}
	var out Output
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Reason.Success() || out.State.Loop != 3 || out.State.ResetID != "r1" {
		t.Fatalf("got %s after %d loops, reset %q", out.Reason, out.State.Loop, out.State.ResetID)
	}
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
		if err := os.WriteFile("testdata/history-usage-limit-reset.json", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
