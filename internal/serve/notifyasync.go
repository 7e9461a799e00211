package serve

import (
	"sync"
	"time"
)

// maxQueuedNotices bounds what one stalled notifier holds back; past it
// the oldest notice goes, said in the log.
const maxQueuedNotices = 10000

// detached runs a Notifier on a goroutine of its own. The daemon calls
// Notify with its lock held, between a task's state change and the next:
// a chat whose API hangs must delay neither the API, nor another task, nor
// the other notifiers (the log hears of a question even while Telegram is
// down). Each notifier keeps its notices' order.
type detached struct {
	n    Notifier
	logf func(format string, a ...any)

	mu   sync.Mutex
	q    []Notice
	wake chan struct{}
	done chan struct{} // closed when run has returned
}

// detach starts n's goroutine; it ends when stop is closed, after handing
// on what was queued by then.
func detach(n Notifier, logf func(string, ...any), stop <-chan struct{}) *detached {
	d := &detached{n: n, logf: logf, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go d.run(stop)
	return d
}

// Notify implements Notifier: it queues, never blocks.
func (d *detached) Notify(n Notice) {
	d.mu.Lock()
	if len(d.q) >= maxQueuedNotices {
		d.logf("notifier stalled: a %s notice of task %s is dropped for a newer one", d.q[0].Kind, d.q[0].TaskID)
		d.q = d.q[1:]
	}
	d.q = append(d.q, n)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *detached) run(stop <-chan struct{}) {
	defer close(d.done)
	for {
		select {
		case <-d.wake:
		case <-stop:
			d.drain()
			return
		}
		d.drain()
	}
}

func (d *detached) drain() {
	for {
		d.mu.Lock()
		if len(d.q) == 0 {
			d.mu.Unlock()
			return
		}
		n := d.q[0]
		d.q = d.q[1:]
		d.mu.Unlock()
		d.n.Notify(n)
	}
}

// waitNotifiers waits for the notifiers' goroutines to hand on what was
// queued before they were stopped, for at most limit: a stalled one does
// not hold the daemon's exit for ever.
func waitNotifiers(ns Notifiers, limit time.Duration) {
	deadline := time.After(limit)
	for _, n := range ns {
		d, ok := n.(*detached)
		if !ok {
			continue
		}
		select {
		case <-d.done:
		case <-deadline:
			return
		}
	}
}
