package events

import (
	"sync"
	"testing"
	"time"

	"ralph/internal/loop"
)

// A blocked observer (a full stdout pipe) neither stalls Publish nor loses
// iteration or stop events; it loses live output beyond its queue, and is
// told so.
func TestBlockedObserverDoesNotBlockAndKeepsImportantEvents(t *testing.T) {
	b := New()
	release := make(chan struct{})
	var mu sync.Mutex
	var got []loop.Event
	b.Subscribe(func(ev loop.Event) {
		<-release
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	}, 10)
	var fast []loop.Event
	var fmu sync.Mutex
	b.Subscribe(func(ev loop.Event) { fmu.Lock(); fast = append(fast, ev); fmu.Unlock() }, 2000)

	start := time.Now()
	for i := 0; i < 1000; i++ {
		b.Publish(loop.Event{Type: loop.EventLive})
		if i%100 == 0 {
			b.Publish(loop.Event{Type: loop.EventIterationEnd, Loop: i / 100})
		}
	}
	b.Publish(loop.Event{Type: loop.EventStop})
	if d := time.Since(start); d > time.Second {
		t.Fatalf("publishing to a blocked observer took %s", d)
	}
	close(release)
	if !b.Close(5 * time.Second) {
		t.Fatal("observers did not finish")
	}
	var iters, live int
	var last loop.Event
	var notice bool
	for _, ev := range got {
		switch {
		case ev.Type == loop.EventIterationEnd:
			iters++
		case ev.Type == loop.EventLive && ev.Live != nil:
			notice = true
		case ev.Type == loop.EventLive:
			live++
		}
		last = ev
	}
	if iters != 10 || last.Type != loop.EventStop {
		t.Errorf("blocked observer got %d iteration events, last %q; want 10 and stop", iters, last.Type)
	}
	if live > 20 || !notice {
		t.Errorf("blocked observer got %d live events (queue 10), drop notice %v", live, notice)
	}
	if len(fast) != 1000+10+1 {
		t.Errorf("fast observer got %d events, want all 1011", len(fast))
	}
}

func TestOrderIsKeptPerObserver(t *testing.T) {
	b := New()
	var got []int
	b.Subscribe(func(ev loop.Event) { got = append(got, ev.Loop) }, 0)
	for i := 1; i <= 100; i++ {
		b.Publish(loop.Event{Type: loop.EventIterationEnd, Loop: i})
	}
	b.Close(time.Second)
	for i, n := range got {
		if n != i+1 {
			t.Fatalf("event %d is loop %d", i, n)
		}
	}
	if len(got) != 100 {
		t.Fatalf("%d events", len(got))
	}
}

func TestCloseGivesUpOnAStuckObserver(t *testing.T) {
	b := New()
	stuck := make(chan struct{})
	defer close(stuck)
	b.Subscribe(func(loop.Event) { <-stuck }, 0)
	b.Publish(loop.Event{Type: loop.EventStop})
	if b.Close(50 * time.Millisecond) {
		t.Fatal("Close reported a stuck observer as finished")
	}
	b.Publish(loop.Event{Type: loop.EventStop}) // after Close: ignored, no panic
}

// Flush returns once what was published before it has been delivered,
// however slow the observer; a stuck one makes it give up at the timeout.
func TestFlush(t *testing.T) {
	b := New()
	var mu sync.Mutex
	var got []string
	release := make(chan struct{})
	b.Subscribe(func(ev loop.Event) {
		if ev.Message == "slow" {
			<-release
		}
		mu.Lock()
		got = append(got, ev.Message)
		mu.Unlock()
	}, 0)
	b.Publish(loop.Event{Type: loop.EventWarning, Message: "slow"})
	b.Publish(loop.Event{Type: loop.EventWarning, Message: "next"})
	if b.Flush(50 * time.Millisecond) {
		t.Fatal("Flush reported a stuck observer done")
	}
	close(release)
	if !b.Flush(5 * time.Second) {
		t.Fatal("Flush gave up on an observer that caught up")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[1] != "next" {
		t.Fatalf("delivered %q before Flush returned", got)
	}
	b.Close(time.Second)
}
