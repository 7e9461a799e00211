package watchdog

import (
	"maps"

	"ralph/internal/plan"
	"ralph/internal/reason"
)

// Seen is a block as the watchdog remembers it.
type Seen struct {
	Key    string
	Fields map[string]string
}

func seen(b *Block) Seen { return Seen{Key: b.Key, Fields: maps.Clone(b.Fields)} }

// same reports whether b is the block s remembers: the same key, or the
// same fields where b's context is cut off (scrolled away), so that a
// scrolling screen never brings an old block back as a new one.
func (s Seen) same(b *Block) bool {
	return s.Key == b.Key || (!b.Whole && s.Fields != nil && maps.Equal(s.Fields, b.Fields))
}

// Memory is what the watchdog keeps of one session from one look to the
// next. It outlives a task: the screen does too.
type Memory struct {
	// Looked: a look was made since the daemon started.
	Looked bool
	// Task is the task the checklist below belongs to.
	Task string
	// Taken is the last block taken, or the one on the screen at the
	// first look (printed before anyone watched: not news).
	Taken Seen
	// Pending is a new block seen once: it is taken when the next look
	// shows it again, so a block still being printed is never read.
	Pending Seen
	// Plan is the task's checklist at the last look; nil before one.
	Plan *plan.Plan
	// Gain counts the checklist items ticked since the last block taken.
	Gain int
}

// Look is one look at a session whose task the watchdog keeps.
type Look struct {
	Task   string
	Screen Screen
	// Plan is the task file's checklist; nil when it could not be read.
	Plan *plan.Plan
	// Recorded is the status block of the task's last record if the
	// watchdog made it: at the first look after a restart, a block that
	// differs from it was printed while nobody watched, and is news.
	Recorded map[string]string
}

// Verdict is what a look means for the task.
type Verdict struct {
	// Block is a new block to record; Gain the checklist items ticked
	// since the block before it.
	Block *Block
	Gain  int
	// Checklist is how the checklist changed since the last look.
	Checklist plan.Change
	// Done is why the task is finished ("" while it is not), Why in words.
	Done reason.Reason
	Why  string
}

// Step folds one look into the memory. It is pure.
func Step(m Memory, l Look) (Memory, Verdict) {
	var v Verdict
	b := l.Screen.Block
	if !m.Looked {
		m.Looked = true
		switch {
		case b == nil:
		case l.Recorded != nil && !maps.Equal(l.Recorded, b.Fields):
			m.Taken = Seen{Fields: maps.Clone(l.Recorded)}
		default:
			m.Taken = seen(b)
		}
	}
	if m.Task != l.Task {
		m.Task, m.Plan, m.Gain, m.Pending = l.Task, nil, 0, Seen{}
	}
	if l.Plan != nil {
		if m.Plan != nil {
			v.Checklist = plan.Diff(*m.Plan, *l.Plan)
			m.Gain += v.Checklist.Checked + v.Checklist.AddedDone
		}
		p := *l.Plan
		m.Plan = &p
	}
	switch {
	case b == nil || m.Taken.same(b) || l.Screen.Busy:
		m.Pending = Seen{}
	case m.Pending.Key == b.Key:
		v.Block, v.Gain = b, m.Gain
		m.Taken, m.Pending, m.Gain = seen(b), Seen{}, 0
	default:
		m.Pending = seen(b)
	}
	switch {
	case v.Block != nil && v.Block.Analysis != nil && v.Block.Analysis.ExitSignal:
		v.Done, v.Why = reason.ProjectComplete, "the agent printed EXIT_SIGNAL: true"
	case l.Plan != nil && l.Plan.Complete():
		v.Done, v.Why = reason.PlanComplete, "every checklist item is ticked"
	}
	return m, v
}
