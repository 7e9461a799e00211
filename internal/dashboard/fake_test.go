package dashboard

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/serve"
)

// t0 is the fake fleet's "now".
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// fakeSource is a fleet in memory: the views and records a daemon would
// return, the verbs it was asked for, and an event stream tests publish on.
type fakeSource struct {
	mu      sync.Mutex
	views   map[string]serve.TaskView
	order   []string
	usage   map[string]serve.TaskUsage
	records map[string]serve.TaskRecords
	its     []serve.SessionIteration
	idle    []string
	pausing map[string]bool
	asked   []string // "verb session [arg]"
	subs    []chan serve.Event
	lists   int // calls of List: one per overview rendered
	who     []fleet.Who
	// past are the kept tasks no longer their session's current one;
	// details and logs what Show and IterationLogOf answer.
	past    []serve.TaskView
	details map[string]serve.TaskDetail
	logs    map[string]serve.IterationLog // by "id/n"
}

func newFakeSource() *fakeSource {
	return &fakeSource{views: map[string]serve.TaskView{}, usage: map[string]serve.TaskUsage{},
		records: map[string]serve.TaskRecords{}, pausing: map[string]bool{}, details: map[string]serve.TaskDetail{}, logs: map[string]serve.IterationLog{}}
}

func (f *fakeSource) put(v serve.TaskView) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.views[v.Session]; !ok {
		f.order = append(f.order, v.Session)
	}
	f.views[v.Session] = v
}

func (f *fakeSource) List() ([]serve.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	out := []serve.TaskView{}
	for _, s := range f.order {
		out = append(out, f.views[s])
	}
	return out, nil
}

// History is every task, current and past, newest (highest id) first.
func (f *fakeSource) History(flt serve.TaskFilter) ([]serve.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	all := append([]serve.TaskView{}, f.past...)
	for _, s := range f.order {
		all = append(all, f.views[s])
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID > all[j].ID })
	out := []serve.TaskView{}
	for _, v := range all {
		if (flt.Session == "" || v.Session == flt.Session) && (flt.State == "" || v.State == flt.State) && (flt.Origin == "" || v.Origin == flt.Origin) {
			out = append(out, v)
		}
	}
	return out, nil
}

func (f *fakeSource) StateCounts() (map[fleet.State]int, error) {
	all, _ := f.History(serve.TaskFilter{})
	n := map[fleet.State]int{}
	for _, v := range all {
		n[v.State]++
	}
	return n, nil
}

func (f *fakeSource) Show(id string) (serve.TaskDetail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.details[id]
	if !ok {
		return d, &fleet.Error{Code: fleet.NotFound, Msg: "no task " + id}
	}
	return d, nil
}

func (f *fakeSource) IterationLogOf(id string, n int) (serve.IterationLog, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.logs[fmt.Sprintf("%s/%d", id, n)]
	if !ok {
		return l, &fleet.Error{Code: fleet.NotFound, Msg: fmt.Sprintf("task %s has no iteration %d kept", id, n)}
	}
	return l, nil
}

func (f *fakeSource) Status(session string) (serve.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.views[session]
	if !ok {
		return v, &fleet.Error{Code: fleet.NotFound, Msg: fmt.Sprintf("unknown session %q", session)}
	}
	return v, nil
}

func (f *fakeSource) Sessions() ([]serve.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []serve.Session
	for _, s := range append(append([]string{}, f.order...), f.idle...) {
		out = append(out, serve.Session{Name: s, Dir: "/src/" + s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeSource) Usage() (map[string]serve.TaskUsage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]serve.TaskUsage{}
	for k, v := range f.usage {
		out[k] = v
	}
	return out, nil
}

func (f *fakeSource) Records(session, _ string) (serve.TaskRecords, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.records[session], nil
}

func (f *fakeSource) Iterations() ([]serve.SessionIteration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.its, nil
}

func (f *fakeSource) PauseRequested(session string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pausing[session]
}

func (f *fakeSource) Subscribe() (<-chan serve.Event, func()) {
	ch := make(chan serve.Event, 64)
	f.mu.Lock()
	f.subs = append(f.subs, ch)
	f.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			for i, c := range f.subs {
				if c == ch {
					f.subs = append(f.subs[:i], f.subs[i+1:]...)
					close(ch)
				}
			}
		})
	}
}

func (f *fakeSource) publish(ev serve.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.subs {
		c <- ev
	}
}

func (f *fakeSource) verb(verb, session string, args ...any) (serve.TaskView, error) {
	f.mu.Lock()
	f.asked = append(f.asked, strings.TrimSpace(fmt.Sprintln(append([]any{verb, session}, args...)...)))
	f.mu.Unlock()
	v, err := f.Status(session)
	if err == nil && verb == "stop" && v.State != fleet.Running {
		return v, &fleet.Error{Code: fleet.Conflict, Msg: "task " + v.ID + " on session " + session + " is not looping (" + string(v.State) + ")"}
	}
	return v, err
}

// Do records the command as the fake's verbs did ("loop a 5", "answer a
// text"), and who gave it.
func (f *fakeSource) Do(_ context.Context, c fleet.Command) (serve.TaskView, error) {
	if err := c.Validate(); err != nil {
		return serve.TaskView{}, err
	}
	f.mu.Lock()
	f.who = append(f.who, c.Who)
	f.mu.Unlock()
	switch c.Verb {
	case fleet.Loop:
		return f.verb("loop", c.Session, c.MaxLoops)
	case fleet.Answer:
		return f.verb("answer", c.Session, c.Text)
	case fleet.Start, fleet.StartLoop:
		f.mu.Lock()
		f.asked = append(f.asked, fmt.Sprintf("%s %s %q %d", c.Verb, c.Session, c.Title, c.MaxLoops))
		f.mu.Unlock()
		return serve.TaskView{Session: c.Session, Title: c.Title, State: fleet.Queued}, nil
	}
	if c.Verb == fleet.Approve || c.Verb == fleet.Deny {
		if c.ForTask {
			return f.verb(string(c.Verb), c.Session, c.Item, "for-task")
		}
		return f.verb(string(c.Verb), c.Session, c.Item)
	}
	return f.verb(string(c.Verb), c.Session)
}

// fleetFixture is a small fleet in every state, with agent text that must
// come out escaped.
func fleetFixture(t *testing.T) *fakeSource {
	t.Helper()
	f := newFakeSource()
	dir := t.TempDir()
	file := filepath.Join(dir, "api-task.md")
	writeFile(t, file, "# Task: Build the API\n\n**Session:** api\n**Status:** IN_PROGRESS\n\n## Checklist\n\n- [x] Model\n- [ ] Handlers <script>\n  - [ ] nested step\n\n## RALPH_STATUS\n")
	br := serve.BreakerView{State: "CLOSED", LastProgressLoop: 3, CurrentLoop: 4}
	f.put(serve.TaskView{ID: "t3", Session: "api", Title: "Build the API", Origin: "cli", State: fleet.Running, LoopCount: 3, MaxLoops: 10,
		CircuitBreaker: br, Questions: []string{}, TaskFile: file, Activity: "executing", CreatedAt: t0.Add(-90 * time.Minute), UpdatedAt: t0})
	f.put(serve.TaskView{ID: "t4", Session: "web", Title: "Pick a <b>database</b>", Origin: "telegram", State: fleet.Waiting, LoopCount: 1, MaxLoops: 100,
		ExitReason: "needs_clarification", CircuitBreaker: serve.BreakerView{State: "CLOSED"}, Questions: []string{"PostgreSQL or <SQLite>?"},
		CreatedAt: t0.Add(-26 * time.Hour)})
	f.put(serve.TaskView{ID: "t2", Session: "ops", Title: "Fix the deploy", Origin: "github", State: fleet.Halted, LoopCount: 7, MaxLoops: 20,
		ExitReason: "circuit_breaker_open", Message: "no progress in 3 loops",
		CircuitBreaker: serve.BreakerView{State: "OPEN", ConsecutiveNoProgress: 3, TotalOpens: 1, Reason: "no progress in 3 loops", CurrentLoop: 7},
		CreatedAt:      t0.Add(-3 * 24 * time.Hour)})
	f.put(serve.TaskView{ID: "t1", Session: "docs", Title: "Write the guide", Origin: "slack", State: fleet.Done, LoopCount: 2, MaxLoops: 10,
		ExitReason: "plan_complete", PRURL: "https://example.com/o/r/pull/7", PRDraft: true, CircuitBreaker: serve.BreakerView{State: "CLOSED"},
		OriginURL: "https://acme.slack.com/archives/C1/p1712000000000100", CreatedAt: t0.Add(-40 * time.Second), UpdatedAt: t0})
	// An earlier task of docs, finished: the counters count it too.
	f.past = []serve.TaskView{{ID: "t0", Session: "docs", Title: "Outline the guide", Origin: "github", State: fleet.Done, LoopCount: 4, MaxLoops: 10,
		ExitReason: "project_complete", OriginURL: "https://github.com/o/r/issues/3", PRURL: "https://example.com/o/r/pull/5",
		CreatedAt: t0.Add(-50 * time.Hour), UpdatedAt: t0.Add(-48 * time.Hour)}}
	f.idle = []string{"spare"}
	f.usage = map[string]serve.TaskUsage{
		"t3": {Iterations: 3, CostUSD: 0.4215, InputTokens: 12000, OutputTokens: 3400, Summary: "Added the handlers & tests", Loop: 3},
		"t2": {Iterations: 7, CostUSD: 2.5, Summary: "Still <blocked> on credentials", Loop: 7},
	}
	its := []loop.Metrics{
		{Loop: 1, StartedAt: t0.Add(-80 * time.Minute), DurationMS: 41000, InputTokens: 4000, OutputTokens: 1000, CostUSD: 0.12, FilesChanged: 3,
			Progress: true, Status: "IN_PROGRESS", Decision: "continue", Breaker: "CLOSED", Summary: "Made the model"},
		{Loop: 2, StartedAt: t0.Add(-60 * time.Minute), DurationMS: 950, ExitCode: 1, Failed: true, Errors: 2, Decision: "continue", Breaker: "HALF_OPEN"},
		{Loop: 3, StartedAt: t0.Add(-30 * time.Minute), DurationMS: 125000, InputTokens: 8000, OutputTokens: 2400, CostUSD: 0.3015, FilesChanged: 2,
			Progress: true, Status: "IN_PROGRESS", Decision: "continue", Breaker: "CLOSED", Summary: "Added the handlers & tests"},
	}
	f.records["api"] = serve.TaskRecords{Iterations: its, Transitions: []breaker.Transition{
		{At: t0.Add(-59 * time.Minute), Loop: 2, From: breaker.Closed, To: breaker.HalfOpen, Message: "2 failed calls"},
		{At: t0.Add(-29 * time.Minute), Loop: 3, From: breaker.HalfOpen, To: breaker.Closed, Message: "progress"},
	}}
	for i, m := range its {
		f.its = append(f.its, serve.SessionIteration{Session: "api", TaskID: "t3", Metrics: m})
		m.StartedAt = m.StartedAt.Add(-24 * time.Hour)
		m.CostUSD *= float64(i + 2)
		f.its = append(f.its, serve.SessionIteration{Session: "ops", TaskID: "t2", Metrics: m})
	}
	f.its = append(f.its, serve.SessionIteration{Session: "ops", TaskID: "t2",
		Metrics: loop.Metrics{Loop: 9, StartedAt: t0.Add(-23 * time.Hour), Decision: "stop:circuit_breaker_open", Breaker: "OPEN"}})
	// t0's record, as `ralph task show t0` has it.
	it := serve.IterationRecord{Metrics: loop.Metrics{Loop: 1, StartedAt: t0.Add(-49 * time.Hour), DurationMS: 61000, InputTokens: 5000, OutputTokens: 900,
		CostUSD: 0.2, FilesChanged: 2, LinesAdded: 40, LinesRemoved: 3, Commit: "0123456789abcdef0123", Progress: true, Status: "COMPLETE",
		Decision: "stop:project_complete", Breaker: "CLOSED", Agent: "claude", Summary: "Outlined <all> chapters",
		Verify: &loop.VerifyRun{Command: "make test"}, Verified: true,
		Decisions: []loop.GateDecision{{At: t0.Add(-49 * time.Hour), Item: "a1", What: "Bash(npm <publish>)", Outcome: "allowed for this task", Surface: "telegram", User: "42"},
			{At: t0.Add(-49 * time.Hour), What: "Bash(npm <publish>)", Outcome: "allowed (for this task, earlier)"}}, DecisionsDropped: 2}, SessionLoop: 1, Why: "status COMPLETE, progress, +40 −3 lines", HasLog: true}
	f.details["t0"] = serve.TaskDetail{TaskView: f.past[0], Iterations: []serve.IterationRecord{it},
		Answers: []serve.Answer{{At: "2026-03-12 13:00", Questions: []string{"Which <chapters>?"}, Answer: "All of them"}}}
	d := f.details["t0"]
	d.Commands = []serve.CommandRecord{{At: t0.Add(-50 * time.Hour), Verb: "start_loop", By: "github:alice"}, {At: t0.Add(-49 * time.Hour), Verb: "answer", By: "github:alice"}}
	f.details["t0"] = d
	f.logs["t0/1"] = serve.IterationLog{Task: f.past[0], Iteration: it, Log: "Reading the outline.\n⚡ Read docs/outline.md\n<script>alert(1)</script>\n"}
	return f
}
