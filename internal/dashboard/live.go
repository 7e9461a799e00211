package dashboard

import (
	"fmt"
	"net/http"
	"time"

	"ralph/internal/httpcap"
	"ralph/internal/loop"
	"ralph/internal/serve"
)

// keepAlive is how often an idle stream sends a comment, so proxies keep
// it open; it is the only thing an idle page costs.
const keepAlive = 30 * time.Second

// stream is one open page's event stream: named events whose data is an
// HTML fragment that htmx's SSE extension swaps into the element with the
// same sse-swap name. A fragment equal to the one sent before is not sent
// again: a form being filled in is not replaced by itself. A stream
// renders only its first full picture itself; the changes after it come
// rendered from its channel.
type stream struct {
	w           http.ResponseWriter
	beforeWrite func()
	sent        map[string]string
}

func (s *stream) send(name, html string) {
	if s.sent[name] == html {
		return
	}
	s.sent[name] = html
	s.write(name, html)
}

func (s *stream) write(name, html string) { s.put(frame(name, html)) }

func (s *stream) put(b []byte) {
	if s.beforeWrite != nil {
		s.beforeWrite()
	}
	_, _ = s.w.Write(b)
}

// deliver writes a change its channel rendered.
func (s *stream) deliver(msgs []message) {
	for _, m := range msgs {
		if m.once {
			if s.sent[m.name] == m.html {
				continue
			}
			s.sent[m.name] = m.html
		}
		s.put(m.sse)
	}
}

// events is GET /events?view=overview[&state=S] or
// ?view=task&session=NAME: the live updates of one page.
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	q := r.URL.Query()
	view, session, filter := q.Get("view"), q.Get("session"), q.Get("state")
	if view != "overview" && (view != "task" || session == "") {
		http.Error(w, "view: overview, or task with a session", http.StatusBadRequest)
		return
	}
	if view == "overview" {
		session = ""
	} else {
		filter = ""
	}
	pg := d.pageFor(r, "", "", "")
	// Joined before the first picture is rendered: a change meanwhile
	// comes after it rather than being lost.
	sub := d.join(channelKey{view: view, session: session, filter: filter, csrf: pg.CSRF})
	defer d.leave(sub)
	s := &stream{w: w, beforeWrite: httpcap.Stream(w, r), sent: map[string]string{}}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A reconnect (the daemon restarted, the page fell behind) waits a
	// little; then everything is sent afresh, so nothing missed stays.
	s.put([]byte("retry: 1000\n\n"))
	if view == "overview" {
		d.sendOverview(s, pg, filter)
	} else {
		d.sendTask(s, pg, session, true)
	}
	fl.Flush()
	keep := time.NewTicker(keepAlive)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			s.put([]byte(": keep-alive\n\n"))
		case msgs, ok := <-sub.ch:
			if !ok {
				return
			}
			s.deliver(msgs)
		}
		fl.Flush()
	}
}

// handle answers a batch of events for one channel's streams.
func (d *Dashboard) handle(s sink, pg page, view, session, filter string, batch []serve.Event) {
	changed, newIteration := false, false
	for _, ev := range batch {
		live := ev.Engine != nil && ev.Engine.Type == loop.EventLive
		if view == "overview" {
			changed = changed || !live
			continue
		}
		if ev.Session != session {
			continue
		}
		switch {
		case live && ev.Engine.Live != nil:
			if !newIteration {
				html, err := d.fragment("live-line", lineOf(ev.At, *ev.Engine.Live))
				if err == nil {
					s.write("live", html)
				}
			}
		case ev.Engine != nil && ev.Engine.Type == loop.EventIterationStart:
			newIteration, changed = true, true
		default:
			changed = true
		}
	}
	switch {
	case view == "overview" && changed:
		d.sendOverview(s, pg, filter)
	case view == "task" && changed:
		// A new iteration's section comes with the lines it already has
		// (the feed kept them), so none is lost or shown twice.
		d.sendTask(s, pg, session, newIteration)
	}
}

func (d *Dashboard) sendOverview(s sink, pg page, filter string) {
	data := d.overviewData(filter)
	data.page = pg
	if html, err := d.fragment("overview-body", data); err == nil {
		s.send("overview", html)
	} else {
		fmt.Fprintf(d.log, "dashboard: overview fragment: %v\n", err)
	}
}

// sendTask sends the task page's parts; the live section only when now
// is set (a new iteration, or a fresh stream), since live lines are
// appended to it one by one.
func (d *Dashboard) sendTask(s sink, pg page, session string, now bool) {
	data, err := d.taskData(session)
	if err != nil {
		return
	}
	data.page = pg
	parts := []string{"head", "question", "checklist", "iterations", "breaker"}
	if now {
		parts = append(parts, "now")
	}
	for _, p := range parts {
		html, err := d.fragment("task-"+p, data)
		if err != nil {
			fmt.Fprintf(d.log, "dashboard: task fragment %s: %v\n", p, err)
			continue
		}
		if p == "now" {
			s.write(p, html)
			continue
		}
		s.send(p, html)
	}
}
