package dashboard

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/serve"
	"ralph/internal/stats"
)

// The counters count every task kept in each state: four tasks done on a
// session whose current task waits are four done (the overview counted
// only each session's current task, and said 0). A state's page lists
// them all, each linked to its record.
func TestCountersCountEveryTask(t *testing.T) {
	f := newFakeSource()
	for i := 1; i <= 4; i++ {
		f.past = append(f.past, serve.TaskView{ID: fmt.Sprintf("t%d", i), Session: "api", Title: fmt.Sprintf("Step %d", i), State: fleet.Done})
	}
	f.put(serve.TaskView{ID: "t5", Session: "api", Title: "Step 5", State: fleet.Waiting, CircuitBreaker: serve.BreakerView{State: "CLOSED"}})
	d := newTestDashboard(t, f)
	c := login(t, d)
	body := get(d, "/", c).Body.String()
	for _, want := range []string{`id="count-done">4<`, `id="count-waiting">1<`, `current <b>1</b>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview lacks %s", want)
		}
	}
	body = get(d, "/?state=done", c).Body.String()
	for i := 1; i <= 4; i++ {
		if !strings.Contains(body, fmt.Sprintf(`<a href="/tasks/t%d">Step %d</a>`, i, i)) {
			t.Errorf("the done page lacks t%d:\n%s", i, body)
		}
	}
	if strings.Contains(body, "Step 5") {
		t.Error("the done page lists the waiting task")
	}
}

// The dashboard's polish: Reset breaker only on a breaker that is not
// closed; Cancel asks first; a draft pull request says so; the
// empty-checklist hint only before the first iteration.
func TestTaskPagePolish(t *testing.T) {
	f := fleetFixture(t)
	d := newTestDashboard(t, f)
	c := login(t, d)
	if body := get(d, "/task/api", c).Body.String(); strings.Contains(body, `action="/task/api/reset"`) {
		t.Error("Reset breaker offered on a CLOSED breaker")
	}
	if body := get(d, "/task/ops", c).Body.String(); !strings.Contains(body, `action="/task/ops/reset"`) {
		t.Error("Reset breaker not offered on an OPEN breaker")
	}
	if body := get(d, "/task/docs", c).Body.String(); !strings.Contains(body, `<span class="tag draft">draft</span>`) {
		t.Error("the draft pull request is not marked as a draft")
	}
	if body := get(d, "/", c).Body.String(); !strings.Contains(body, `>PR</a> <span class="tag draft"`) {
		t.Error("the overview does not mark the draft pull request")
	}

	// Cancel: the first press asks, on a page of its own; nothing is done
	// until the confirmation.
	form := url.Values{"csrf": {d.keys.csrf(c.Value)}}
	rec := post(d, "/task/api/cancel", c, form, nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Cancel this task?") || !strings.Contains(rec.Body.String(), `name="confirm" value="yes"`) {
		t.Fatalf("cancel without confirmation: %d\n%s", rec.Code, rec.Body)
	}
	if slices.Contains(f.asked, "cancel api") {
		t.Fatal("cancelled before the confirmation")
	}
	form.Set("confirm", "yes")
	if rec := post(d, "/task/api/cancel", c, form, nil); rec.Code != 303 || !slices.Contains(f.asked, "cancel api") {
		t.Errorf("confirmed cancel: %d, asked %v", rec.Code, f.asked)
	}

	// The checklist hint: before the first iteration, the agent will
	// write one; after several, it has not.
	for _, c2 := range []struct {
		its  []loop.Metrics
		want string
	}{
		{nil, "the agent writes them on its first iteration"},
		{[]loop.Metrics{{Loop: 1}, {Loop: 2}, {Loop: 3}}, "The agent has written no checklist"},
	} {
		file := t.TempDir() + "/task.md"
		writeFile(t, file, "# Task: x\n\n## Checklist\n\n")
		_, why := checklist(file, len(c2.its))
		if !strings.Contains(why, c2.want) {
			t.Errorf("%d iterations: hint %q, want %q", len(c2.its), why, c2.want)
		}
	}
}

// A chart by day draws one bar per calendar day: a single busy day is
// one narrow bar among the week before it, and a gap is a day of zero.
func TestChartsOneBarPerDay(t *testing.T) {
	day := func(s string, n int) stats.Day { return stats.Day{Date: s, Iterations: n, Succeeded: n} }
	for _, c := range []struct {
		name string
		days []stats.Day
		want []string
	}{
		{"one day", []stats.Day{day("2026-03-14", 5)},
			[]string{"2026-03-08", "2026-03-09", "2026-03-10", "2026-03-11", "2026-03-12", "2026-03-13", "2026-03-14"}},
		{"a gap", []stats.Day{day("2026-03-01", 1), day("2026-03-10", 2)},
			[]string{"2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09", "2026-03-10"}},
	} {
		ch := charts(stats.Report{Days: c.days}, nil)[0]
		var labels []string
		xs := map[float64]bool{}
		for _, b := range ch.Bars {
			if b.Part == "ok" {
				labels = append(labels, b.Label)
				xs[b.X] = true
			}
		}
		if !slices.Equal(labels, c.want) || len(xs) != len(c.want) {
			t.Errorf("%s: bars %v at %d places, want %v", c.name, labels, len(xs), c.want)
		}
		for _, b := range ch.Bars {
			if b.W >= float64(chartW)/float64(len(c.want)) {
				t.Errorf("%s: a bar %v wide fills its day's slot", c.name, b.W)
			}
		}
	}
}
