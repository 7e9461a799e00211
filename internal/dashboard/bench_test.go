package dashboard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
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
	s := &stream{w: httptest.NewRecorder(), sent: map[string]string{}}
	b.ReportAllocs()
	for b.Loop() {
		s.sent = map[string]string{}
		d.sendOverview(s, page{}, "")
	}
}

// One change of the fleet as the open overview pages see it: the event
// reaches the dashboard, is rendered and written to every page. With one
// viewer's tabs the render is shared, so the CPU a change costs stays
// flat in the number of tabs; twenty viewers (each with their own CSRF
// token in the forms) still cost a render each, as every tab did before.
func BenchmarkOverviewChange(b *testing.B) {
	for _, c := range []struct {
		name          string
		tabs, viewers int
	}{{"tabs=1", 1, 1}, {"tabs=20", 20, 1}, {"tabs=20,viewers=20", 20, 20}} {
		b.Run(c.name, func(b *testing.B) { benchChange(b, c.tabs, c.viewers) })
	}
}

func benchChange(b *testing.B, tabs, viewers int) {
	f := benchFleet(200)
	d := New(f, Options{Token: testToken, Now: func() time.Time { return t0 }})
	defer d.Close()
	got := make(chan struct{}, tabs)
	var wg sync.WaitGroup
	for i := range tabs {
		sub := d.join(channelKey{view: "overview", csrf: fmt.Sprintf("csrf-%d", i%viewers)})
		s := &stream{w: discard{}, sent: map[string]string{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for msgs := range sub.ch {
				s.deliver(msgs)
				got <- struct{}{}
			}
		}()
		defer d.leave(sub)
	}
	v, _ := f.Status("s001")
	cpu0 := cpuTime()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		n++
		v.LoopCount = n // a change every page shows
		f.put(v)
		f.publish(serve.Event{Type: "task_running", Session: "s001", TaskID: v.ID, State: fleet.Running})
		for range tabs {
			<-got
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/change")
	d.Close()
	wg.Wait()
}

type discard struct{ http.ResponseWriter }

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// cpuTime is the CPU this process has used, user and system, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
