// Package events is the one broker between what happens and who watches:
// a loop's events from the engine to its observers (the log, the
// terminal, JSON lines, the monitor) in `ralph run`, and in the daemon
// every task's events, its loops' included, to the log, the notices, the
// API's event stream and the dashboard — one typed stream, in order,
// without letting any observer hold the loop up.
//
// Every observer gets its own queue and goroutine. Publish never blocks:
// the agent's live output (Droppable) is dropped for an observer whose
// queue of it is full, and counted; every other event is kept, however far
// behind the observer is — there are a handful per iteration.
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

// Item is what a bus carries: an event that says whether an observer that
// fell behind may miss it.
type Item interface{ Droppable() bool }

// Bus fans events out to observers. The zero value is not usable; use New
// or Of.
type Bus[T Item] struct {
	mu     sync.Mutex
	subs   []*sub[T]
	closed bool
	// lost is the event that tells an observer how many it missed.
	lost func(n int) T
}

// New returns a bus of a loop's events with no observers.
func New() *Bus[loop.Event] { return Of(droppedNotice) }

// Of returns a bus of T; lost makes the event that tells an observer how
// many droppable events it missed.
func Of[T Item](lost func(n int) T) *Bus[T] { return &Bus[T]{lost: lost} }

type sub[T Item] struct {
	fn      func(T)
	lost    func(n int) T
	mu      sync.Mutex
	queue   []T
	live    int // live events in queue
	maxLive int
	dropped int // live events dropped since the last delivery
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	// pushed and handled count the events taken and delivered; each batch
	// delivered closes progress (and makes a new one), for Flush.
	pushed, handled uint64
	progress        chan struct{}
}

// Subscribe adds an observer: fn receives every event in order on a
// goroutine of its own. liveQueue bounds its backlog of live events
// (0: DefaultLiveQueue). Dropped live output is reported to fn as a live
// event saying how much was lost.
func (b *Bus[T]) Subscribe(fn func(T), liveQueue int) {
	if liveQueue <= 0 {
		liveQueue = DefaultLiveQueue
	}
	s := &sub[T]{fn: fn, lost: b.lost, maxLive: liveQueue, wake: make(chan struct{}, 1), done: make(chan struct{}),
		progress: make(chan struct{})}
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
func (b *Bus[T]) Publish(ev T) {
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
func (b *Bus[T]) Close(timeout time.Duration) bool {
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

func (s *sub[T]) push(ev T) {
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
	s.pushed++
	s.mu.Unlock()
	s.signal()
}

// Flush waits until every observer has been handed what was published
// before the call (a host that logs a task's end after its loop's last
// events calls it in between), or until timeout; it reports whether all
// were.
func (b *Bus[T]) Flush(timeout time.Duration) bool {
	b.mu.Lock()
	subs := b.subs
	b.mu.Unlock()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for _, s := range subs {
		s.mu.Lock()
		target := s.pushed
		s.mu.Unlock()
		for {
			s.mu.Lock()
			done, progress := s.handled >= target || s.closed, s.progress
			s.mu.Unlock()
			if done {
				break
			}
			select {
			case <-progress:
			case <-s.done:
			case <-deadline.C:
				return false
			}
		}
	}
	return true
}

func (s *sub[T]) signal() {
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is pending; it drains this too
	}
}

func (s *sub[T]) run() {
	defer close(s.done)
	for {
		<-s.wake
		for {
			s.mu.Lock()
			batch, dropped, closed := s.queue, s.dropped, s.closed
			s.queue, s.live, s.dropped = nil, 0, 0
			s.mu.Unlock()
			if dropped > 0 {
				s.fn(s.lost(dropped))
			}
			for _, ev := range batch {
				s.fn(ev)
			}
			s.mu.Lock()
			s.handled += uint64(len(batch))
			close(s.progress)
			s.progress = make(chan struct{})
			s.mu.Unlock()
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
