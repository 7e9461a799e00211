package dashboard

import (
	"fmt"
	"io"
	"sync"
	"time"

	"ralph/internal/activity"
	"ralph/internal/loop"
	"ralph/internal/serve"
)

// feed follows the daemon's event stream with one subscription for the
// whole dashboard. It keeps what pages show but the daemon does not keep
// in a form cheap to read: each task's cost and last summary (read once
// from the store, then added to from iteration events) and each session's
// live agent activity of its running iteration. Then it hands each event
// to the open pages' streams.
type feed struct {
	src Source
	log io.Writer

	mu     sync.Mutex
	usage  map[string]serve.TaskUsage // by task id
	live   map[string]*liveLog        // by session
	lis    map[*listener]struct{}
	closed bool
	stop   func()
	done   chan struct{}
}

// liveKeep is how many live lines a session's running iteration keeps for
// a page opened in its middle.
const liveKeep = 200

type liveLog struct {
	loop  int
	lines []liveLine
}

// liveLine is one thing the agent did, as the page shows it.
type liveLine struct {
	At     time.Time
	Kind   string
	Text   string
	Tool   string
	Target string
}

// listener is one open page's stream: events arrive in order; a page too
// slow for listenQueue of them is dropped (its channel closes) and its
// browser reconnects to a fresh render.
type listener struct{ ch chan serve.Event }

const listenQueue = 256

func startFeed(src Source, log io.Writer) *feed {
	f := &feed{src: src, log: log, live: map[string]*liveLog{}, lis: map[*listener]struct{}{}, done: make(chan struct{})}
	ch := f.resubscribe()
	go f.run(ch)
	return f
}

// resubscribe subscribes, then reads the store's usage: an iteration
// saved in between is in both, and add skips it by its loop number.
func (f *feed) resubscribe() <-chan serve.Event {
	ch, stop := f.src.Subscribe()
	u, err := f.src.Usage()
	if err != nil {
		fmt.Fprintf(f.log, "dashboard: task usage: %v\n", err)
		u = map[string]serve.TaskUsage{}
	}
	f.mu.Lock()
	f.usage, f.stop = u, stop
	f.mu.Unlock()
	return ch
}

func (f *feed) run(ch <-chan serve.Event) {
	defer close(f.done)
	for {
		ev, ok := <-ch
		if !ok {
			f.mu.Lock()
			closed := f.closed
			f.mu.Unlock()
			if closed {
				return
			}
			// Dropped for falling behind: start over, and so do the pages.
			f.dropAll()
			ch = f.resubscribe()
			continue
		}
		f.apply(ev)
		f.fanOut(ev)
	}
}

func (f *feed) apply(ev serve.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := ev.Engine
	switch {
	case e == nil:
	case e.Type == loop.EventIterationStart:
		f.live[ev.Session] = &liveLog{loop: e.Loop}
	case e.Type == loop.EventLive && e.Live != nil:
		l := f.live[ev.Session]
		if l == nil || l.loop != e.Loop {
			l = &liveLog{loop: e.Loop}
			f.live[ev.Session] = l
		}
		if len(l.lines) >= liveKeep {
			l.lines = append(l.lines[:0], l.lines[len(l.lines)-liveKeep/2:]...)
		}
		l.lines = append(l.lines, lineOf(ev.At, *e.Live))
	case e.Type == loop.EventIterationEnd && e.Iteration != nil:
		u := f.usage[ev.TaskID]
		if e.Iteration.Loop <= u.Loop {
			return
		}
		m := e.Iteration
		u.Iterations++
		u.Loop = m.Loop
		u.CostUSD += m.CostUSD
		u.InputTokens += m.InputTokens
		u.OutputTokens += m.OutputTokens
		if m.Summary != "" {
			u.Summary = m.Summary
		}
		f.usage[ev.TaskID] = u
	}
}

func lineOf(at time.Time, e activity.Event) liveLine {
	return liveLine{At: at, Kind: string(e.Kind), Text: e.Text, Tool: e.Tool, Target: e.Target}
}

func (f *feed) fanOut(ev serve.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for l := range f.lis {
		select {
		case l.ch <- ev:
		default:
			delete(f.lis, l)
			close(l.ch)
		}
	}
}

func (f *feed) dropAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for l := range f.lis {
		delete(f.lis, l)
		close(l.ch)
	}
}

func (f *feed) listen() *listener {
	l := &listener{ch: make(chan serve.Event, listenQueue)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		close(l.ch)
		return l
	}
	f.lis[l] = struct{}{}
	return l
}

func (f *feed) forget(l *listener) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.lis[l]; ok {
		delete(f.lis, l)
		close(l.ch)
	}
}

// usageOf returns the tasks' usage (a copy).
func (f *feed) usageOf(id string) serve.TaskUsage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.usage[id]
}

// liveOf returns the session's running iteration and its live lines.
func (f *feed) liveOf(session string) (int, []liveLine) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.live[session]
	if l == nil {
		return 0, nil
	}
	return l.loop, append([]liveLine(nil), l.lines...)
}

func (f *feed) close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	stop := f.stop
	f.mu.Unlock()
	f.dropAll()
	stop()
	<-f.done
}
