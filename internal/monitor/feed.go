package monitor

import (
	"sync"

	"ralph/internal/agent"
	"ralph/internal/loop"
)

// maxFeedQueue bounds a Feed's queue. The dashboard drains it on every
// wake-up, so it only fills while the dashboard is stuck.
const maxFeedQueue = 1024

// feedItem is one queued live event or engine event; one queue keeps their
// order, so output lands in the iteration it belongs to.
type feedItem struct {
	isEvent bool
	live    agent.LiveEvent
	event   loop.Event
}

// Feed carries an in-process engine's events and live output to the
// dashboard. Its methods never block, so they can be the engine's Emit
// observer and the agent's OnEvent directly; they are safe for concurrent
// use and may be called before the dashboard starts or after it ends.
type Feed struct {
	mu      sync.Mutex
	queue   []feedItem
	dropped int // live events lost to a full queue since the last drain
	wake    chan struct{}
	// pending is what the call waits on now (Pending), hasPending that it
	// changed since the last drain.
	pending    []Prompt
	hasPending bool
}

// NewFeed returns an empty feed.
func NewFeed() *Feed { return &Feed{wake: make(chan struct{}, 1)} }

// Live queues one live event. When the queue is full the oldest live event
// goes: output may be lost under back-pressure, loop events are not.
func (f *Feed) Live(ev agent.LiveEvent) { f.push(feedItem{live: ev}) }

// Event queues one engine event; the agent's live output (EventLive) goes
// the way of Live. When the queue is full and holds no live output, the
// oldest event other than a start or a stop makes room.
func (f *Feed) Event(ev loop.Event) {
	if ev.Type == loop.EventLive {
		if ev.Live != nil {
			f.Live(*ev.Live)
		}
		return
	}
	f.push(feedItem{isEvent: true, event: ev})
}

func (f *Feed) push(it feedItem) {
	f.mu.Lock()
	if len(f.queue) >= maxFeedQueue {
		f.makeRoom()
	}
	f.queue = append(f.queue, it)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default: // a wake-up is already pending; it will drain this too
	}
}

func (f *Feed) makeRoom() {
	victim := -1
	for i, it := range f.queue {
		if !it.isEvent {
			victim = i
			f.dropped++
			break
		}
		if victim < 0 && it.event.Type != loop.EventStart && it.event.Type != loop.EventStop {
			victim = i
		}
	}
	if victim >= 0 {
		f.queue = append(f.queue[:victim], f.queue[victim+1:]...)
	}
}

// drain takes everything queued.
func (f *Feed) drain() feedMsg {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := feedMsg{items: f.queue, dropped: f.dropped, pending: f.pending, hasPending: f.hasPending}
	f.queue, f.dropped, f.hasPending = nil, 0, false
	return m
}
