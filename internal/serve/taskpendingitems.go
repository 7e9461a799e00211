package serve

import (
	"slices"
	"strconv"

	"ralph/internal/fleet"
)

// PendingItem is one thing the agent waits on inside its call: a tool call
// for a decision (approve|deny ID) or a question for an answer.
type PendingItem struct {
	ID   string `json:"id"`   // a1, q2
	Kind string `json:"kind"` // approval, question
	What string `json:"what"` // Bash(npm publish); the question's text
	// Options are a question's answers to choose from, where the agent
	// gave some (a chat offers them as buttons).
	Options []string `json:"options,omitempty"`
}

// maxOptions bounds a question's options as views show them.
const maxOptions = 10

// The kinds of a PendingItem.
const (
	pendingApproval = "approval"
	pendingQuestion = "question"
)

// pendingItems is what the runner's call waits on, oldest first.
func (r *taskRunner) pendingItems() []PendingItem {
	var out []PendingItem
	for _, p := range r.approvals {
		out = append(out, PendingItem{ID: p.id, Kind: pendingApproval, What: p.what})
	}
	if a := r.inCall; a != nil {
		var opts []string
		for _, o := range a.q.Options[:min(len(a.q.Options), maxOptions)] {
			if o = clipLine(o, 75); o != "" {
				opts = append(opts, o)
			}
		}
		out = append(out, PendingItem{ID: a.id, Kind: pendingQuestion, What: clipLine(a.q.Text, 200), Options: opts})
	}
	if r.t != nil && r.keptOf == r.t.ID && r.t.State == fleet.Waiting {
		for _, k := range r.kept {
			if k.Decided == nil {
				out = append(out, PendingItem{ID: k.Item, Kind: k.Kind, What: k.What})
			}
		}
	}
	slices.SortFunc(out, func(a, b PendingItem) int { return itemSeq(a.ID) - itemSeq(b.ID) })
	return out
}

// itemSeq is the number in an item's id: ids count up across kinds.
func itemSeq(id string) int {
	n, _ := strconv.Atoi(id[min(1, len(id)):])
	return n
}

// syncPending shows the runner's pending items to views (on the runner's
// goroutine, after each change).
func (r *taskRunner) syncPending() {
	items, task := r.pendingItems(), ""
	if r.t != nil {
		task = r.t.ID
	}
	r.d.mu.Lock()
	r.pending, r.pendingTask = items, task
	r.d.mu.Unlock()
}

// pendingOf is what t's call waits on now (masked as views are).
func (d *Daemon) pendingOf(t Task) []PendingItem {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.runners[t.Session]
	if r == nil || r.pendingTask != t.ID || len(r.pending) == 0 {
		return nil
	}
	out := slices.Clone(r.pending)
	for i := range out {
		out[i].Options = slices.Clone(out[i].Options)
	}
	return out
}
