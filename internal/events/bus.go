// Package events carries a loop's events from the engine to its observers
// (the log, the terminal, JSON lines, the monitor, and in the daemon the
// API's event stream, chat and web) without letting any of them hold the
// loop up.
//
// Every observer gets its own queue and goroutine. Publish never blocks:
// the agent's live output (loop.Event.Droppable) is dropped for an observer
// whose queue of it is full, and counted; every other event is kept,
// however far behind the observer is — there are a handful per iteration.
package events

import (
	"fmt"
	"sync"
	"time"

	"ralph/internal/activity"
	"ralph/internal/loop"
)

// DefaultLiveQueue is how many live events an observer may fall behind by
// before newer ones are dropped for it.
const DefaultLiveQueue = 512

// Bus fans events out to observers. The zero value is not usable; use New.
type Bus struct {
	mu     sync.Mutex
	subs   []*sub
	closed bool
}

// New returns a bus with no observers.
func New() *Bus { return &Bus{} }

type sub struct {
	fn      func(loop.Event)
	mu      sync.Mutex
	queue   []loop.Event
	live    int // live events in queue
	maxLive int
	dropped int // live events dropped since the last delivery
	closed  bool
	wake    chan struct{}
	done    chan struct{}
}

// Subscribe adds an observer: fn receives every event in order on a
// goroutine of its own. liveQueue bounds its backlog of live events
// (0: DefaultLiveQueue). Dropped live output is reported to fn as a live
// event saying how much was lost.
func (b *Bus) Subscribe(fn func(loop.Event), liveQueue int) {
	if liveQueue <= 0 {
		liveQueue = DefaultLiveQueue
	}
	s := &sub{fn: fn, maxLive: liveQueue, wake: make(chan struct{}, 1), done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		close(s.done)
		return
	}
	b.subs = append(b.subs, s)
	b.mu.Unlock()
	go s.run()
}

// Publish hands ev to every observer without waiting for any.
func (b *Bus) Publish(ev loop.Event) {
	b.mu.Lock()
	subs := b.subs
	b.mu.Unlock()
	for _, s := range subs {
		s.push(ev)
	}
}

// Close delivers what is queued and ends the observers' goroutines. It
// waits up to timeout for them (an observer stuck on a full pipe must not
// keep ralph from exiting) and reports whether all finished.
func (b *Bus) Close(timeout time.Duration) bool {
	b.mu.Lock()
	subs := b.subs
	b.closed = true
	b.subs = nil
	b.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.signal()
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for _, s := range subs {
		select {
		case <-s.done:
		case <-deadline.C:
			return false
		}
	}
	return true
}

func (s *sub) push(ev loop.Event) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if ev.Droppable() {
		if s.live >= s.maxLive {
			s.dropped++
			s.mu.Unlock()
			return
		}
		s.live++
	}
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	s.signal()
}

func (s *sub) signal() {
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is pending; it drains this too
	}
}

func (s *sub) run() {
	defer close(s.done)
	for {
		<-s.wake
		for {
			s.mu.Lock()
			batch, dropped, closed := s.queue, s.dropped, s.closed
			s.queue, s.live, s.dropped = nil, 0, 0
			s.mu.Unlock()
			if dropped > 0 {
				s.fn(droppedNotice(dropped))
			}
			for _, ev := range batch {
				s.fn(ev)
			}
			if len(batch) == 0 && dropped == 0 {
				if closed {
					return
				}
				break
			}
		}
	}
}

func droppedNotice(n int) loop.Event {
	return loop.Event{Type: loop.EventLive, At: time.Now(), Live: &activity.Event{
		Kind: activity.Output, Text: fmt.Sprintf("… %d live event(s) not shown (this view fell behind)", n)}}
}
