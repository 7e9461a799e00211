package dashboard

import (
	"strings"
	"sync"

	"ralph/internal/serve"
)

// Open pages that show the same thing to the same viewer share a
// channel: one goroutine follows the feed for all of them, renders each
// change once and hands every stream the same bytes. Twenty tabs on the
// overview cost one render per change, not twenty (docs/dashboard.md has
// the benchmark). The viewer is part of the key because the fragments'
// forms carry the viewer's CSRF token.
type channelKey struct{ view, session, filter, csrf string }

type channel struct {
	key  channelKey
	d    *Dashboard
	lis  *listener
	mu   sync.Mutex
	subs map[*subscriber]struct{}
}

// subscriber is one open stream of a channel: it receives each change's
// messages in order; one that falls subQueue changes behind is dropped
// (its channel closes) and its browser reconnects to a fresh render.
type subscriber struct {
	ch chan []message
	c  *channel
}

const subQueue = 64

// message is one named event of a change, rendered and framed once.
type message struct {
	name, html string
	// once: a stream that was last sent the same html under this name
	// skips it (a form being filled in is not replaced by itself).
	once bool
	sse  []byte
}

// sink takes a change's fragments: a stream writes them, a channel's
// collector keeps them for its subscribers.
type sink interface {
	send(name, html string)  // skipped when unchanged
	write(name, html string) // always
}

// collector is the sink of one change of a channel.
type collector struct{ msgs []message }

func (c *collector) send(name, html string) {
	c.msgs = append(c.msgs, message{name: name, html: html, once: true, sse: frame(name, html)})
}

func (c *collector) write(name, html string) {
	c.msgs = append(c.msgs, message{name: name, html: html, sse: frame(name, html)})
}

// frame is an SSE event: a CR or LF ends a data line; the browser joins
// the lines with LF.
func frame(name, html string) []byte {
	var b strings.Builder
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\n")
	for _, line := range strings.Split(strings.ReplaceAll(html, "\r", ""), "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return []byte(b.String())
}

// join subscribes to the channel of key, starting it if it is the first.
func (d *Dashboard) join(key channelKey) *subscriber {
	d.chMu.Lock()
	defer d.chMu.Unlock()
	c := d.chans[key]
	if c == nil {
		c = &channel{key: key, d: d, lis: d.feed.listen(), subs: map[*subscriber]struct{}{}}
		d.chans[key] = c
		go c.run()
	}
	s := &subscriber{ch: make(chan []message, subQueue), c: c}
	c.mu.Lock()
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	return s
}

// leave unsubscribes; the last to leave stops the channel.
func (d *Dashboard) leave(s *subscriber) {
	c := s.c
	d.chMu.Lock()
	defer d.chMu.Unlock()
	c.mu.Lock()
	delete(c.subs, s)
	empty := len(c.subs) == 0
	c.mu.Unlock()
	if empty && d.chans[c.key] == c {
		delete(d.chans, c.key)
		d.feed.forget(c.lis)
	}
}

// run renders each batch of the feed's events once and fans the result
// out, until the feed drops the channel or the last stream leaves.
func (c *channel) run() {
	defer c.end()
	pg := page{CSRF: c.key.csrf}
	for {
		ev, ok := <-c.lis.ch
		if !ok {
			return
		}
		// Take what else has arrived too: one render answers a burst.
		batch := []serve.Event{ev}
	drain:
		for len(batch) < listenQueue {
			select {
			case e, ok := <-c.lis.ch:
				if !ok {
					return
				}
				batch = append(batch, e)
			default:
				break drain
			}
		}
		var col collector
		c.d.handle(&col, pg, c.key.view, c.key.session, c.key.filter, batch)
		if len(col.msgs) > 0 {
			c.fanOut(col.msgs)
		}
	}
}

func (c *channel) fanOut(msgs []message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.subs {
		select {
		case s.ch <- msgs:
		default:
			delete(c.subs, s)
			close(s.ch)
		}
	}
}

// end closes the streams of a channel the feed dropped (the daemon's
// events fell behind, or the dashboard closed): their browsers reconnect
// to a fresh render.
func (c *channel) end() {
	c.d.chMu.Lock()
	if c.d.chans[c.key] == c {
		delete(c.d.chans, c.key)
	}
	c.d.chMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.subs {
		delete(c.subs, s)
		close(s.ch)
	}
}
