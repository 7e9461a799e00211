package watchdog

import (
	"testing"

	"ralph/internal/analyze"
	"ralph/internal/plan"
	"ralph/internal/reason"
)

func blk(key, status string, exit, whole bool) *Block {
	return &Block{Key: key, Whole: whole, Fields: map[string]string{"STATUS": status},
		Analysis: &analyze.Analysis{Status: status, ExitSignal: exit, ExitSignalExplicit: true}}
}

func checklist(done ...bool) *plan.Plan {
	p := &plan.Plan{}
	for i, d := range done {
		p.Tasks = append(p.Tasks, plan.Task{Line: i + 1, Text: "item " + string(rune('a'+i)), Done: d})
	}
	return p
}

// Step, look by look: what is taken, when, and what ends the task.
func TestStep(t *testing.T) {
	a := blk("a", "IN_PROGRESS", false, true)
	b := blk("b", "IN_PROGRESS", false, true)
	bAgain := blk("b2", "IN_PROGRESS", false, true) // the same fields in a new message
	bCut := blk("b3", "IN_PROGRESS", false, false)  // b seen again, its context scrolled off
	done := blk("c", "COMPLETE", true, true)
	type step struct {
		name  string
		look  Look
		taken string // key of the block taken, "" none
		gain  int
		done  reason.Reason
	}
	steps := []step{
		{name: "the block on the screen at the first look is old", look: Look{Task: "t1", Screen: Screen{Block: a}, Plan: checklist(false, false)}},
		{name: "still the same", look: Look{Task: "t1", Screen: Screen{Block: a}, Plan: checklist(false, false)}},
		{name: "a new block while the agent is busy waits", look: Look{Task: "t1", Screen: Screen{Block: b, Busy: true}, Plan: checklist(true, false)}},
		{name: "seen once idle: pending", look: Look{Task: "t1", Screen: Screen{Block: b}, Plan: checklist(true, false)}},
		{name: "seen twice: taken with the item ticked meanwhile", look: Look{Task: "t1", Screen: Screen{Block: b}, Plan: checklist(true, false)}, taken: "b", gain: 1},
		{name: "taken once", look: Look{Task: "t1", Screen: Screen{Block: b}, Plan: checklist(true, false)}},
		{name: "the same fields in a new message", look: Look{Task: "t1", Screen: Screen{Block: bAgain}}},
		{name: "count again", look: Look{Task: "t1", Screen: Screen{Block: bAgain}}, taken: "b2"},
		{name: "scrolled, context cut off", look: Look{Task: "t1", Screen: Screen{Block: bCut}}},
		{name: "still", look: Look{Task: "t1", Screen: Screen{Block: bCut}}},
		{name: "exit signal, once", look: Look{Task: "t1", Screen: Screen{Block: done}}},
		{name: "exit signal, twice: done", look: Look{Task: "t1", Screen: Screen{Block: done}}, taken: "c", done: reason.ProjectComplete},
		{name: "a new task does not inherit the old screen", look: Look{Task: "t2", Screen: Screen{Block: done}, Plan: checklist(false)}},
		{name: "nor later", look: Look{Task: "t2", Screen: Screen{Block: done}, Plan: checklist(false)}},
		{name: "a cleared screen", look: Look{Task: "t2", Plan: checklist(false)}},
		{name: "the checklist ticked in full ends it", look: Look{Task: "t2", Plan: checklist(true)}, done: reason.PlanComplete},
	}
	var m Memory
	for i, s := range steps {
		var v Verdict
		m, v = Step(m, s.look)
		got := ""
		if v.Block != nil {
			got = v.Block.Key
		}
		if got != s.taken || v.Gain != s.gain || v.Done != s.done {
			t.Errorf("step %d (%s): taken %q gain %d done %q, want %q %d %q", i, s.name, got, v.Gain, v.Done, s.taken, s.gain, s.done)
		}
	}
}

// After a restart the first look compares with what the watchdog last
// recorded for the task: a block printed meanwhile is news, the recorded
// one is not.
func TestStepAfterRestart(t *testing.T) {
	rec := map[string]string{"STATUS": "IN_PROGRESS"}
	newer := blk("n", "COMPLETE", false, true)
	m, v := Step(Memory{}, Look{Task: "t", Screen: Screen{Block: newer}, Recorded: rec})
	if v.Block != nil {
		t.Fatal("taken at the first look")
	}
	if _, v = Step(m, Look{Task: "t", Screen: Screen{Block: newer}, Recorded: rec}); v.Block == nil {
		t.Error("a block printed while nobody watched was lost")
	}
	old := blk("o", "IN_PROGRESS", false, true)
	m, _ = Step(Memory{}, Look{Task: "t", Screen: Screen{Block: old}, Recorded: rec})
	if _, v = Step(m, Look{Task: "t", Screen: Screen{Block: old}, Recorded: rec}); v.Block != nil {
		t.Error("the recorded block was taken again")
	}
}

// A checklist item ticked counts once, and the gain goes with the next
// block taken.
func TestStepChecklist(t *testing.T) {
	m, v := Step(Memory{}, Look{Task: "t", Plan: checklist(false, false, false)})
	if v.Checklist.Changed() {
		t.Errorf("first look: %v", v.Checklist)
	}
	m, v = Step(m, Look{Task: "t", Plan: checklist(true, true, false)})
	if v.Checklist.Checked != 2 || v.Done != "" {
		t.Errorf("two ticked: %+v", v)
	}
	m, _ = Step(m, Look{Task: "t", Plan: nil}) // unreadable for a moment
	b := blk("x", "IN_PROGRESS", false, true)
	m, _ = Step(m, Look{Task: "t", Screen: Screen{Block: b}, Plan: checklist(true, true, false)})
	if _, v = Step(m, Look{Task: "t", Screen: Screen{Block: b}, Plan: checklist(true, true, false)}); v.Block == nil || v.Gain != 2 {
		t.Errorf("taken with gain %d: %+v", v.Gain, v.Block)
	}
}
