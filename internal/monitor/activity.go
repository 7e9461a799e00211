package monitor

import (
	"ralph/internal/agent"
	"ralph/internal/redact"
)

// activityCap is how many live events the dashboard keeps: more than any
// screen shows, few enough that memory stays flat through a long iteration.
const activityCap = 200

// activity is the recent live events, oldest first. Appends are amortised
// O(1): the slice is compacted only when it holds twice the cap.
type activity struct {
	events []agent.LiveEvent
}

func (a *activity) add(evs ...agent.LiveEvent) {
	// The agent's text may quote a secret (a file it read, a command's
	// output); it is masked once here, where every event comes in.
	for _, ev := range evs {
		ev.Text, ev.Target = redact.String(ev.Text), redact.String(ev.Target)
		a.events = append(a.events, ev)
	}
	if len(a.events) > 2*activityCap {
		a.events = append([]agent.LiveEvent(nil), a.events[len(a.events)-activityCap:]...)
	}
}

func (a *activity) reset() { a.events = nil }

// last returns the kept events, oldest first.
func (a *activity) last() []agent.LiveEvent {
	if n := len(a.events); n > activityCap {
		return a.events[n-activityCap:]
	}
	return a.events
}
