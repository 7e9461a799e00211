package serve

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The outbox delivers notices at least once to each channel. A notice is
// written to the store in the transaction of the task's change that
// causes it (settleWith), then each channel's goroutine hands it on and
// records the delivery. Undelivered notices are tried again with backoff
// and outlive the daemon: the next one delivers them. A channel that
// stalls or fails holds up only itself: neither the API, nor a task, nor
// another channel waits for it.

// Bounds of the outbox.
const (
	// firstRetry doubles with each failed try of a notice, up to lastRetry.
	firstRetry = time.Second
	lastRetry  = 5 * time.Minute
	// deliverTimeout bounds one try of a Deliverer: longer than a chat's
	// own retries (Telegram's take about two minutes), so that a try
	// ends by itself rather than being given up on while it may still
	// get through.
	deliverTimeout = 3 * time.Minute
	// keepDelivered is how long a notice every channel delivered stays
	// (for a look at the store); keepStale bounds any notice's stay: one a
	// channel could not deliver in a week is dropped, said in the log.
	keepDelivered = 24 * time.Hour
	keepStale     = 7 * 24 * time.Hour
	pruneEvery    = time.Hour
	// pendingBatch is how many notices a channel reads at a time.
	pendingBatch = 50
)

type outbox struct {
	db    *DB
	logf  func(string, ...any)
	chans []*channel
	names []string
	// first is the first retry's wait (firstRetry; shorter in tests).
	first time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
}

// channel is one Notifier and its goroutine.
type channel struct {
	name string
	n    Notifier
	wake chan struct{}
	done chan struct{}
}

// newOutbox makes the outbox of ns's channels (a Notifiers is several; a
// nil one none). start sets their goroutines going.
func newOutbox(db *DB, ns Notifier, logf func(string, ...any)) *outbox {
	o := &outbox{db: db, logf: logf, first: firstRetry}
	o.ctx, o.cancel = context.WithCancel(context.Background())
	seen := map[string]int{}
	for _, n := range flatten(ns) {
		name := fmt.Sprintf("%T", n)
		if x, ok := n.(Named); ok {
			name = x.Channel()
		}
		// Two channels of one name (two of a kind) are told apart by
		// their order, stable as long as the configuration is.
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s#%d", name, seen[name])
		}
		o.chans = append(o.chans, &channel{name: name, n: n, wake: make(chan struct{}, 1), done: make(chan struct{})})
		o.names = append(o.names, name)
	}
	return o
}

func flatten(n Notifier) []Notifier {
	switch x := n.(type) {
	case nil:
		return nil
	case Notifiers:
		var out []Notifier
		for _, y := range x {
			out = append(out, flatten(y)...)
		}
		return out
	}
	return []Notifier{n}
}

// start runs each channel's goroutine, which first delivers what an
// earlier daemon left owed, and the pruning.
func (o *outbox) start() {
	for _, c := range o.chans {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			defer close(c.done)
			o.run(c)
		}()
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		for {
			o.prune()
			select {
			case <-o.ctx.Done():
				return
			case <-time.After(pruneEvery):
			}
		}
	}()
}

// Notify implements Notifier: it puts n in the outbox by itself, for a
// notice no task's change of the store causes (a usage-limit wait).
func (o *outbox) Notify(n Notice) {
	if err := o.db.AddNotice(&n, o.names, time.Now()); err != nil {
		o.logf("task %s: the %s notice is not in the outbox: %v", n.TaskID, n.Kind, err)
		return
	}
	o.wakeAll()
}

// wakeAll tells every channel that a notice came.
func (o *outbox) wakeAll() {
	for _, c := range o.chans {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// close stops the channels and waits at most limit for them: a notice
// being delivered then may be delivered again by the next daemon; a
// stalled channel does not hold the exit.
func (o *outbox) close(limit time.Duration) {
	o.closed.Do(func() {
		o.cancel()
		deadline := time.After(limit)
		for _, c := range o.chans {
			select {
			case <-c.done:
			case <-deadline:
				return
			}
		}
	})
}

// run delivers c's notices as they come until the outbox closes.
func (o *outbox) run(c *channel) {
	// A daemon's first look tries at once what an earlier one left
	// waiting for its retry: the restart may be what mends it.
	for fresh := true; ; fresh = false {
		until := o.drain(c, fresh)
		var timer <-chan time.Time
		if !until.IsZero() {
			timer = time.After(time.Until(until))
		}
		select {
		case <-o.ctx.Done():
			return
		case <-c.wake:
		case <-timer:
		}
	}
}

// drain delivers c's owed notices in order. It returns when the next try
// is due: the first owed notice's retry, or zero when none is owed (a new
// one wakes the channel). fresh tries the first at once.
func (o *outbox) drain(c *channel, fresh bool) time.Time {
	for o.ctx.Err() == nil {
		owed, err := o.db.pendingNotices(c.name, pendingBatch)
		if err != nil {
			if o.ctx.Err() == nil {
				o.logf("notices of %s: %v", c.name, err)
			}
			return time.Now().Add(lastRetry)
		}
		for _, p := range owed {
			// Order is kept: a notice waiting for its retry holds back the
			// later ones (a question is not overtaken by the task's end).
			if p.nextTry.After(time.Now()) && !fresh {
				return p.nextTry
			}
			fresh = false
			err := o.deliver(c, p.notice)
			if o.ctx.Err() != nil {
				return time.Time{}
			}
			if err != nil {
				wait := retryWait(o.first, p.tries)
				o.logf("%s: the %s notice %s of task %s is not delivered (%v); again in %s", c.name, p.notice.Kind, p.notice.ID, p.notice.TaskID, err, wait)
				next := time.Now().Add(wait)
				if err := o.db.noticeFailed(p.rowID, c.name, p.tries+1, next, err.Error()); err != nil {
					o.logf("notices of %s: %v", c.name, err)
				}
				return next
			}
			if err := o.db.noticeDelivered(p.rowID, c.name, time.Now()); err != nil {
				// Delivered again by the next try: at least once.
				o.logf("notices of %s: %v", c.name, err)
				return time.Now().Add(lastRetry)
			}
		}
		if len(owed) < pendingBatch {
			return time.Time{}
		}
	}
	return time.Time{}
}

// retryWait is the wait after the tries+1st failed try.
func retryWait(first time.Duration, tries int) time.Duration {
	w := first
	for range tries {
		if w *= 2; w >= lastRetry {
			return lastRetry
		}
	}
	return min(w, lastRetry)
}

// deliver hands n to c once; a panic in a notifier is a failed try, not
// the daemon's end.
func (o *outbox) deliver(c *channel, n Notice) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the notifier failed: %v", r)
		}
	}()
	if d, ok := c.n.(Deliverer); ok {
		ctx, cancel := context.WithTimeout(o.ctx, deliverTimeout)
		defer cancel()
		return d.Deliver(ctx, n)
	}
	c.n.Notify(n)
	return nil
}

// prune drops delivered notices after keepDelivered, any after keepStale.
func (o *outbox) prune() {
	now := time.Now()
	n, err := o.db.pruneOutbox(now.Add(-keepDelivered), now.Add(-keepStale))
	switch {
	case err != nil && o.ctx.Err() == nil:
		o.logf("outbox: prune: %v", err)
	case n > 0:
		o.logf("outbox: %d notice(s) a channel could not deliver in %s are dropped", n, keepStale)
	}
}

// openOutbox starts the outbox of the log and the configured notifiers;
// from then on the daemon's Notifier puts notices in it.
func (d *Daemon) openOutbox() {
	d.outbox = newOutbox(d.db, Notifiers{LogNotifier{W: d.logw}, d.opts.Notifier}, d.logf)
	d.opts.Notifier = d.outbox
	d.outbox.start()
}
