package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// On Temporal as locally, the required files are checked before each call:
// a task file gone after the first call stops the loop with
// integrity_failure instead of calling the agent again.
func TestTemporalMissingTaskFileStopsTheLoop(t *testing.T) {
	r := newTemporalRig(t)
	file := filepath.Join(r.Home, "handoffs", "m-task.md")
	steps := twoSteps(file, "m")
	steps.Iterations[0].Remove = []string{file}
	_, scriptM := r.Session("m", steps)
	r.worker("a")
	r.Start(1)
	r.OK("start", "m", "Build", "it")
	r.OK("loop", "m", "10")
	v := r.WaitFor("m", "stopped", func(v serve.TaskView) bool { return v.ExitReason != "" && v.State != "running" })
	if v.ExitReason != "integrity_failure" || v.LoopCount != 1 || !strings.Contains(v.Message, "m-task.md") {
		t.Fatalf("task ended %s (%q) after %d loops; want integrity_failure naming the task file after 1", v.ExitReason, v.Message, v.LoopCount)
	}
	if calls := readFile(t, script.ArgvLog(scriptM)); strings.Count(calls, "\n") != 1 {
		t.Errorf("agent calls: %d, want 1", strings.Count(calls, "\n"))
	}
}

// A task file a person edits while the loop is paused between two calls
// is what the next decision sees: every step ticked, the loop ends
// plan_complete without a second call (before, the workflow decided with
// the plan as the last call had left it).
func TestTemporalPlanEditedBetweenCallsIsSeen(t *testing.T) {
	r := newTemporalRig(t)
	file := filepath.Join(r.Home, "handoffs", "e-task.md")
	steps := twoSteps(file, "e")
	// Time to pause while the first call runs.
	steps.Iterations[0].Sleep = script.Duration(2 * time.Second)
	_, scriptE := r.Session("e", steps)
	r.worker("a")
	r.Start(1)
	r.OK("start", "e", "Build", "it")
	r.OK("loop", "e", "10")
	r.workerRunning("task t1: loop 1, attempt 1")
	r.OK("pause", "e")
	r.WaitFor("e", "paused after its first call", func(v serve.TaskView) bool { return v.LoopCount == 1 && v.Activity == "paused" })
	if err := os.WriteFile(file, []byte(servetest.TaskFile("Build it", "e", true, true)), 0o644); err != nil {
		t.Fatal(err)
	}
	r.OK("resume", "e")
	v := r.WaitFor("e", "ended", func(v serve.TaskView) bool { return v.ExitReason != "" && v.State != "running" })
	if v.ExitReason != "plan_complete" || v.LoopCount != 1 {
		t.Fatalf("task ended %s after %d loops; want plan_complete after 1", v.ExitReason, v.LoopCount)
	}
	if calls := readFile(t, script.ArgvLog(scriptE)); strings.Count(calls, "\n") != 1 {
		t.Errorf("agent calls: %d, want 1", strings.Count(calls, "\n"))
	}
}
