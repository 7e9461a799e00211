package dashboard

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"ralph/internal/loop"
	"ralph/internal/serve"
)

// keepAlive is how often an idle stream sends a comment, so proxies keep
// it open; it is the only thing an idle page costs.
const keepAlive = 30 * time.Second

// stream is one open page's event stream: named events whose data is an
// HTML fragment that htmx's SSE extension swaps into the element with the
// same sse-swap name. A fragment equal to the one sent before is not sent
// again: a form being filled in is not replaced by itself.
type stream struct {
	w    http.ResponseWriter
	fl   http.Flusher
	d    *Dashboard
	sent map[string]string
}

func (s *stream) send(name, html string) {
	if s.sent[name] == html {
		return
	}
	s.sent[name] = html
	s.write(name, html)
}

func (s *stream) write(name, html string) {
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\n", name)
	// A CR or LF ends a data line; the browser joins the lines with LF.
	for _, line := range strings.Split(strings.ReplaceAll(html, "\r", ""), "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	_, _ = s.w.Write([]byte(b.String()))
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
	l := d.feed.listen()
	defer d.feed.forget(l)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &stream{w: w, fl: fl, d: d, sent: map[string]string{}}
	// A reconnect (the daemon restarted, the page fell behind) waits a
	// little; then everything is sent afresh, so nothing missed stays.
	fmt.Fprint(w, "retry: 1000\n\n")
	pg := d.pageFor(r, "", "", "")
	refresh := func() {
		if view == "overview" {
			d.sendOverview(s, pg, filter)
		} else {
			d.sendTask(s, pg, session, true)
		}
	}
	refresh()
	fl.Flush()
	keep := time.NewTicker(keepAlive)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case ev, ok := <-l.ch:
			if !ok {
				return
			}
			// Take what else has arrived too: one render answers a burst.
			batch := []serve.Event{ev}
		drain:
			for len(batch) < listenQueue {
				select {
				case e, ok := <-l.ch:
					if !ok {
						return
					}
					batch = append(batch, e)
				default:
					break drain
				}
			}
			d.handle(s, pg, view, session, filter, batch)
		}
		fl.Flush()
	}
}

// handle answers a batch of events for one stream.
func (d *Dashboard) handle(s *stream, pg page, view, session, filter string, batch []serve.Event) {
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

func (d *Dashboard) sendOverview(s *stream, pg page, filter string) {
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
func (d *Dashboard) sendTask(s *stream, pg page, session string, now bool) {
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
