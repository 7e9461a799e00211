package dashboard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// benchFleet is n tasks in a mix of states, each with a summary and a
// cost, as the overview shows them.
func benchFleet(n int) *fakeSource {
	f := newFakeSource()
	for i := range n {
		s := fmt.Sprintf("s%03d", i)
		st := states[i%len(states)]
		v := serve.TaskView{ID: fmt.Sprintf("t%d", i), Session: s, Title: "Task " + s + " with a title of some length", Origin: "cli",
			State: st, LoopCount: i % 40, MaxLoops: 100, CircuitBreaker: serve.BreakerView{State: "CLOSED"}, Questions: []string{},
			CreatedAt: t0.Add(-time.Duration(i) * time.Minute)}
		if st == fleet.Waiting && i%2 == 0 {
			v.Questions = []string{"Which one?"}
		}
		f.put(v)
		f.usage[v.ID] = serve.TaskUsage{Iterations: i % 40, CostUSD: float64(i) * 0.013, Loop: i % 40,
			Summary: "Implemented the handler for the endpoint, added tests, and updated the docs & the changelog."}
	}
	return f
}

// The overview of 200 tasks, rendered by the handler as a browser gets
// it (the daemon's List is measured apart: serve's BenchmarkAPIList200).
func BenchmarkOverview200(b *testing.B) {
	d := New(benchFleet(200), Options{Token: testToken, Now: func() time.Time { return t0 }})
	defer d.Close()
	cookie := &http.Cookie{Name: cookieName, Value: d.keys.session(t0)}
	b.ReportAllocs()
	for b.Loop() {
		rec := get(d, "/", cookie)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// One update of an open overview: the fragment its stream sends.
func BenchmarkOverviewFragment200(b *testing.B) {
	d := New(benchFleet(200), Options{Token: testToken, Now: func() time.Time { return t0 }})
	defer d.Close()
	s := &stream{w: httptest.NewRecorder(), d: d, sent: map[string]string{}}
	b.ReportAllocs()
	for b.Loop() {
		s.sent = map[string]string{}
		d.sendOverview(s, page{}, "")
	}
}
