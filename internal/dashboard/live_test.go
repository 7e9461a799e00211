package dashboard

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ralph/internal/activity"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/serve"
)

// sseReader reads named events from a stream.
type sseReader struct {
	t  *testing.T
	sc *bufio.Scanner
}

// next returns the next event's name and data (its lines joined by LF).
func (r sseReader) next() (string, string) {
	r.t.Helper()
	var name string
	var data []string
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case line == "" && name != "":
			return name, strings.Join(data, "\n")
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
	r.t.Fatalf("the stream ended: %v", r.sc.Err())
	return "", ""
}

// until reads events until one named name whose data holds want.
func (r sseReader) until(name, want string) string {
	r.t.Helper()
	for {
		n, data := r.next()
		if n == name && strings.Contains(data, want) {
			return data
		}
	}
}

func openStream(t *testing.T, srv *httptest.Server, query string) sseReader {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/events?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %v", res.StatusCode, res.Header)
	}
	return sseReader{t: t, sc: bufio.NewScanner(res.Body)}
}

// A task page's stream: the parts at once, then the agent's live lines as
// they come (escaped), a new iteration's section, the head after an
// iteration with its cost added.
func TestTaskStream(t *testing.T) {
	f := fleetFixture(t)
	d := newTestDashboard(t, f)
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	s := openStream(t, srv, "view=task&session=api")
	s.until("head", `<span class="loop" id="loop">3</span>`)
	s.until("now", "Waiting for the agent")

	f.publish((serve.Event{Type: loop.EventIterationStart, Session: "api", TaskID: "t3", Loop: 4,
		Engine: &loop.Event{Type: loop.EventIterationStart, Loop: 4}}))
	s.until("now", "Loop 4 is running")
	for _, le := range []activity.Event{{Kind: activity.Text, Text: "Reading <main.go>"}, {Kind: activity.Tool, Tool: "Bash", Target: "go test ./..."}} {
		f.publish((serve.Event{Type: loop.EventLive, At: t0, Session: "api", TaskID: "t3", Loop: 4, Engine: &loop.Event{Type: loop.EventLive, Loop: 4, Live: &le}}))
	}
	if got := s.until("live", "Reading"); !strings.Contains(got, "Reading &lt;main.go&gt;") {
		t.Errorf("live line not escaped: %s", got)
	}
	s.until("live", "⚡ Bash</span> go test ./...")
	// Another session's events do not reach this page.
	f.publish((serve.Event{Type: loop.EventLive, Session: "web", Engine: &loop.Event{Type: loop.EventLive, Live: &activity.Event{Kind: activity.Text, Text: "elsewhere"}}}))

	v, _ := f.Status("api")
	v.LoopCount = 4
	f.put(v)
	f.publish((serve.Event{Type: loop.EventIterationEnd, Session: "api", TaskID: "t3", Loop: 4,
		Engine: &loop.Event{Type: loop.EventIterationEnd, Loop: 4, Iteration: &loop.Metrics{Loop: 4, CostUSD: 0.5, Summary: "Wired it"}}}))
	head := s.until("head", `<span class="loop" id="loop">4</span>`)
	if !strings.Contains(head, "$0.92") {
		t.Errorf("the cost of the new iteration is not added: %s", head)
	}
	if _, lines := d.feed.liveOf("api"); len(lines) != 2 {
		t.Errorf("the feed keeps %d live lines", len(lines))
	}
	// An iteration the store had already counted is not added again.
	f.publish((serve.Event{Type: loop.EventIterationEnd, Session: "api", TaskID: "t3", Loop: 4,
		Engine: &loop.Event{Type: loop.EventIterationEnd, Loop: 4, Iteration: &loop.Metrics{Loop: 4, CostUSD: 0.5}}}))
	f.publish((serve.Event{Type: "task_waiting", Session: "api", TaskID: "t3", State: fleet.Waiting}))
	v.State = fleet.Waiting
	f.put(v)
	f.publish((serve.Event{Type: "task_waiting", Session: "api", TaskID: "t3", State: fleet.Waiting}))
	s.until("head", "st-waiting")
	if u := d.feed.usageOf("t3"); u.CostUSD != 0.9215 || u.Iterations != 4 {
		t.Errorf("usage: %+v", u)
	}
}

// The overview's stream re-renders the counts and rows on a task's event.
func TestOverviewStream(t *testing.T) {
	f := fleetFixture(t)
	d := newTestDashboard(t, f)
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	s := openStream(t, srv, "view=overview&state=running")
	s.until("overview", `running <b id="count-running">1</b>`)
	v, _ := f.Status("web")
	v.State, v.Questions = fleet.Running, nil
	f.put(v)
	f.publish((serve.Event{Type: "task_running", Session: "web", TaskID: "t4", State: fleet.Running}))
	got := s.until("overview", `running <b id="count-running">2</b>`)
	if !strings.Contains(got, `id="task-t4"`) || strings.Contains(got, `id="task-t2"`) {
		t.Errorf("the filtered rows:\n%s", got)
	}
}

// A closed dashboard ends its streams.
func TestCloseEndsStreams(t *testing.T) {
	f := fleetFixture(t)
	d := New(f, Options{Token: testToken, Now: func() time.Time { return t0 }})
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	s := openStream(t, srv, "view=overview")
	s.until("overview", "current <b>4</b>")
	d.Close()
	for s.sc.Scan() {
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) != 0 {
		t.Errorf("still subscribed: %d", len(f.subs))
	}
}

// Twenty open overview tabs of one viewer cost one render per change:
// each renders its own first picture, then a change is rendered once and
// reaches all of them.
func TestOneRenderForManyTabs(t *testing.T) {
	f := fleetFixture(t)
	d := newTestDashboard(t, f)
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	const tabs = 20
	var streams []sseReader
	for range tabs {
		s := openStream(t, srv, "view=overview")
		s.until("overview", `running <b id="count-running">1</b>`)
		streams = append(streams, s)
	}
	f.mu.Lock()
	before := f.lists
	f.mu.Unlock()
	v, _ := f.Status("web")
	v.State, v.Questions = fleet.Running, nil
	f.put(v)
	f.publish((serve.Event{Type: "task_running", Session: "web", TaskID: "t4", State: fleet.Running}))
	for _, s := range streams {
		s.until("overview", `running <b id="count-running">2</b>`)
	}
	f.mu.Lock()
	renders := f.lists - before
	f.mu.Unlock()
	if renders != 1 {
		t.Errorf("one change of %d open tabs was rendered %d times", tabs, renders)
	}
}
