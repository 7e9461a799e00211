package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/ratelimit"
	"ralph/internal/reason"
	"ralph/internal/store"
)

type (
	Event = loop.Event
	Spec  = loop.Spec
)

const (
	EventWait        = loop.EventWait
	EventWarning     = loop.EventWarning
	EventAgentSwitch = loop.EventAgentSwitch
)

// fakeClock is the engine's time: Sleep advances it and is recorded, so no
// test ever sleeps.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
	// onSleep runs after every sleep, outside the lock: a person acting
	// while the loop waits.
	onSleep func()
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	hook := c.onSleep
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
	return ctx.Err()
}

// call is one scripted agent call.
type call struct {
	out      string            // stdout
	exit     int               //
	files    map[string]string // written into the project during the call
	plan     string            // new fix_plan.md content
	cancel   bool              // the user presses Ctrl-C during the call
	removeMD bool              // AGENT.md vanishes
	took     time.Duration
	during   func() // runs while the agent works (a person acting meanwhile)
	// runErr is what Run returns before the agent ever runs (a start
	// that failed); outputErr the call's Result.OutputErr.
	runErr, outputErr error
}

type fakeAgent struct {
	t       *testing.T
	clock   *fakeClock
	calls   []call
	n       int
	invs    []agent.Invocation
	cancel  context.CancelFunc
	project string
	name    string // "" is "fake"
}

func (f *fakeAgent) Name() string {
	if f.name == "" {
		return "fake"
	}
	return f.name
}
func (f *fakeAgent) Capabilities() agent.Capabilities {
	return agent.Capabilities{StructuredOutput: true}
}
func (f *fakeAgent) Command(agent.Invocation) ([]string, error) { return []string{"fake"}, nil }
func (f *fakeAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	f.invs = append(f.invs, inv)
	if f.n >= len(f.calls) {
		f.t.Fatalf("unexpected call %d", f.n+1)
	}
	c := f.calls[f.n]
	f.n++
	if c.runErr != nil {
		return agent.Result{ExitCode: -1}, c.runErr
	}
	for name, content := range c.files {
		if err := os.WriteFile(filepath.Join(f.project, name), []byte(content), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	if c.plan != "" {
		os.WriteFile(filepath.Join(f.project, ".ralph", "fix_plan.md"), []byte(c.plan), 0o644)
	}
	if c.removeMD {
		os.Remove(filepath.Join(f.project, ".ralph", "AGENT.md"))
	}
	if c.during != nil {
		c.during()
	}
	f.clock.Sleep(context.Background(), max(c.took, time.Minute))
	if err := os.WriteFile(inv.StdoutPath, []byte(c.out), 0o644); err != nil {
		f.t.Fatal(err)
	}
	os.WriteFile(inv.StderrPath, nil, 0o644)
	if c.cancel {
		f.cancel()
		return agent.Result{ExitCode: 130, Interrupted: true}, nil
	}
	a, err := analyze.Analyze(strings.NewReader(c.out), analyze.Options{ExitCode: c.exit, Now: f.clock.Now()})
	if err != nil {
		f.t.Fatal(err)
	}
	return agent.Result{ExitCode: c.exit, Analysis: a, StdoutPath: inv.StdoutPath, OutputErr: c.outputErr}, nil
}

// memSessions hears of the agent session's changes (it lives in the
// state) and keeps the last one and the resets.
type memSessions struct {
	id     string
	resets []string
}

func (m *memSessions) Changed(c SessionChange) error {
	m.id = c.To.ID
	if c.Why != "" {
		m.resets = append(m.resets, c.Why)
	}
	return nil
}

const openPlanMD = "# Plan\n\n## High\n- [x] Set up\n- [ ] Add login\n- [ ] Add logout\n\n## Optional\n- [ ] Dark mode\n"
const donePlanMD = "# Plan\n\n## High\n- [x] Set up\n- [x] Add login\n- [x] Add logout\n\n## Optional\n- [ ] Dark mode\n"

func project(t *testing.T, planMD string) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
	for name, content := range map[string]string{"PROMPT.md": "Work on the plan.\n", "fix_plan.md": planMD, "AGENT.md": "go test ./...\n"} {
		if err := os.WriteFile(filepath.Join(dir, ".ralph", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init", "--allow-empty"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	return dir
}

func result(text string, extra string) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"session_id":"s1","total_cost_usd":0.25,"usage":{"input_tokens":1000,"output_tokens":200},"result":%s%s}`+"\n", b, extra)
}

func block(status string, exit bool, tests string) string {
	return fmt.Sprintf("\n---RALPH_STATUS---\nSTATUS: %s\nEXIT_SIGNAL: %v\nTESTS_STATUS: %s\n---END_RALPH_STATUS---", status, exit, tests)
}

type harness struct {
	dir      string
	clock    *fakeClock
	agent    *fakeAgent
	sessions *memSessions
	events   []Event
	engine   *Engine
}

func newHarness(t *testing.T, planMD string, calls []call, mut func(*Spec)) *harness {
	t.Helper()
	h := &harness{dir: project(t, planMD), clock: &fakeClock{now: time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)}, sessions: &memSessions{}}
	h.agent = &fakeAgent{t: t, clock: h.clock, calls: calls, project: h.dir}
	st, err := store.Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{OutputFormat: "json", Agents: []loop.AgentSpec{{Name: "fake"}},
		Policy: loop.Policy{Breaker: breaker.DefaultThresholds(), Limits: ratelimit.DefaultLimits(), UsageLimitWait: time.Hour,
			UsageLimitMargin: time.Minute, FailureBackoff: 30 * time.Second}}
	if mut != nil {
		mut(&spec)
	}
	h.engine = New(spec, Deps{Agents: []agent.Adapter{h.agent}, Store: st, Sessions: h.sessions, Now: h.clock.Now, Sleep: h.clock.Sleep,
		Emit: func(ev Event) { h.events = append(h.events, ev) }})
	return h
}

func (h *harness) run(t *testing.T) Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.agent.cancel = cancel
	res, err := h.engine.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func (h *harness) status(t *testing.T) store.Status {
	t.Helper()
	st, err := store.ReadStatus(filepath.Join(h.dir, ".ralph", "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestEngineCompletes(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{
		{out: result("Added login."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{"login.go": "package x\n"},
			plan: strings.Replace(openPlanMD, "- [ ] Add login", "- [x] Add login", 1)},
		{out: result("All tasks are done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"logout.go": "package x\n"}, plan: donePlanMD},
	}, nil)
	res := h.run(t)
	if res.Reason != reason.ProjectComplete || res.ExitCode != 0 || res.Loops != 2 {
		t.Fatalf("result %+v", res)
	}
	if h.agent.invs[0].SessionID != "" || h.agent.invs[1].SessionID != "s1" {
		t.Errorf("sessions: first %q, second %q (want fresh, then resumed s1)", h.agent.invs[0].SessionID, h.agent.invs[1].SessionID)
	}
	if !strings.Contains(h.agent.invs[1].AppendSystemPrompt, "[ralph loop 2]") || !strings.Contains(h.agent.invs[1].AppendSystemPrompt, "1 of 3 tasks open; next: Add logout") {
		t.Errorf("context: %q", h.agent.invs[1].AppendSystemPrompt)
	}
	st := h.status(t)
	if st.ExitReason != "project_complete" || st.LoopCount != 2 || st.Totals.CostUSD != 0.5 || st.Totals.InputTokens != 2000 || st.CallsMadeThisHour != 2 {
		t.Errorf("status %+v", st)
	}
	if len(h.sessions.resets) != 1 {
		t.Errorf("session resets %q, want one on completion", h.sessions.resets)
	}
	// A status block, an explicit EXIT_SIGNAL and three completion indicators.
	if st.LastConfidenceScore == nil || *st.LastConfidenceScore != 100 {
		t.Errorf("status last_confidence_score %v, want 100", st.LastConfidenceScore)
	}
	var lines int
	var scores []int
	store.ReadMetrics(filepath.Join(h.dir, ".ralph", "logs", "metrics.jsonl"), func(_ int, raw json.RawMessage) error {
		lines++
		var m struct {
			Score *int `json:"confidence_score"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Score != nil {
			scores = append(scores, *m.Score)
		}
		return nil
	})
	if lines != 2 {
		t.Errorf("metrics lines %d", lines)
	}
	if len(scores) != 2 || scores[1] != 100 {
		t.Errorf("metrics confidence_score %v, want a score per line, 100 last", scores)
	}
}

func TestEnginePlanCompleteCostsNoCall(t *testing.T) {
	h := newHarness(t, donePlanMD, nil, nil)
	res := h.run(t)
	if res.Reason != "plan_complete" || res.ExitCode != 0 || h.agent.n != 0 {
		t.Fatalf("result %+v after %d calls", res, h.agent.n)
	}
}

func TestEngineUsageLimitWaitsThenFinishes(t *testing.T) {
	limit := `{"type":"result","subtype":"success","is_error":true,"session_id":"s1","result":"You've hit your 5-hour limit · resets 9pm (UTC)","api_error":"usage_limit_reached"}` + "\n"
	h := newHarness(t, openPlanMD, []call{
		{out: limit, exit: 1},
		{out: result("Everything is done."+block("COMPLETE", true, "PASSING"), ""), plan: donePlanMD, files: map[string]string{"a.go": "x"}},
	}, nil)
	res := h.run(t)
	if res.Reason != reason.ProjectComplete {
		t.Fatalf("result %+v", res)
	}
	// The call ended at 20:01; the reset is 21:00, plus a minute of margin.
	if len(h.clock.sleeps) < 2 || h.clock.sleeps[1] != 59*time.Minute+time.Minute {
		t.Errorf("sleeps %v, want the wait until 21:01", h.clock.sleeps)
	}
	if h.agent.invs[1].SessionID != "s1" {
		t.Errorf("the same work resumes after a usage limit: session %q", h.agent.invs[1].SessionID)
	}
}

func TestEngineUsageLimitExit(t *testing.T) {
	limit := `{"type":"result","is_error":true,"result":"You've hit your 5-hour limit · resets 9pm (UTC)"}` + "\n"
	h := newHarness(t, openPlanMD, []call{{out: limit, exit: 1}}, func(s *Spec) { s.Policy.ExitOnUsageLimit = true })
	if res := h.run(t); res.Reason != "usage_limit" || res.ExitCode != 4 {
		t.Fatalf("result %+v", res)
	}
}

func TestEngineBreakerOpensAndStaysOpenOnRestart(t *testing.T) {
	idle := call{out: result("Looked around."+block("IN_PROGRESS", false, "UNKNOWN"), "")}
	h := newHarness(t, openPlanMD, []call{idle, idle, idle}, nil)
	res := h.run(t)
	if res.Reason != "circuit_breaker_open" || res.ExitCode != 2 || res.Loops != 3 {
		t.Fatalf("result %+v", res)
	}
	if st := h.status(t); st.Breaker.State != "OPEN" {
		t.Errorf("status breaker %+v", st.Breaker)
	}
	// A restart within the cooldown makes no call.
	st, _ := store.Open(h.dir)
	again := New(h.engine.spec, Deps{Agents: []agent.Adapter{h.agent}, Store: st, Sessions: h.sessions, Now: h.clock.Now, Sleep: h.clock.Sleep})
	res2, err := again.Run(context.Background())
	if err != nil || res2.Reason != "circuit_breaker_open" || h.agent.n != 3 {
		t.Fatalf("restart: %+v %v after %d calls", res2, err, h.agent.n)
	}
}

func TestEngineRateLimitWaitsForTheWindow(t *testing.T) {
	work := func(i int) call {
		return call{out: result("Step."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{fmt.Sprintf("f%d.go", i): "x"}}
	}
	h := newHarness(t, openPlanMD, []call{work(1), work(2), work(3)}, func(s *Spec) {
		s.Policy.Limits.MaxCallsPerHour = 2
		s.Policy.Budget.MaxLoops = 3
	})
	res := h.run(t)
	if res.Reason != "max_loops" || res.ExitCode != 5 || h.agent.n != 3 {
		t.Fatalf("result %+v after %d calls", res, h.agent.n)
	}
	var waited bool
	for _, ev := range h.events {
		if ev.Type == EventWait && ev.WaitKind == "rate_limit" {
			waited = true
		}
	}
	if !waited {
		t.Error("no rate-limit wait")
	}
}

func TestEngineInterrupt(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{{cancel: true}}, nil)
	res := h.run(t)
	if res.Reason != "interrupted" || res.ExitCode != 130 {
		t.Fatalf("result %+v", res)
	}
	if st := h.status(t); st.ExitReason != "interrupted" {
		t.Errorf("status %+v", st)
	}
}

func TestEngineIntegrityFailure(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{{out: result("Oops."+block("IN_PROGRESS", false, "PASSING"), ""), removeMD: true, files: map[string]string{"a": "b"}}}, nil)
	if res := h.run(t); res.Reason != "integrity_failure" || res.ExitCode != 7 || !strings.Contains(res.Message, "AGENT.md") {
		t.Fatalf("result %+v", res)
	}
}

func TestEngineFailureBackoffDoubles(t *testing.T) {
	fail := call{out: `{"type":"result","is_error":true,"result":"API Error: 529 Overloaded"}` + "\n", exit: 1}
	h := newHarness(t, openPlanMD, []call{fail, fail, fail, fail, fail}, nil)
	res := h.run(t)
	if res.Reason != "circuit_breaker_open" {
		t.Fatalf("result %+v", res)
	}
	var pauses []time.Duration
	for i, d := range h.clock.sleeps {
		if i%2 == 1 { // the fake agent's own minute comes first
			pauses = append(pauses, d)
		}
	}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute}
	if fmt.Sprint(pauses) != fmt.Sprint(want) {
		t.Errorf("backoff %v, want %v", pauses, want)
	}
}

func TestEngineCorruptStateIsRecovered(t *testing.T) {
	h := newHarness(t, donePlanMD, nil, nil)
	os.WriteFile(filepath.Join(h.dir, ".ralph", ".circuit_breaker_state"), []byte(`{"state": "OPEN", `), 0o644)
	res := h.run(t)
	if res.Reason != "plan_complete" {
		t.Fatalf("result %+v", res)
	}
	var warned bool
	for _, ev := range h.events {
		warned = warned || (ev.Type == EventWarning && strings.Contains(ev.Message, "corrupt"))
	}
	matches, _ := filepath.Glob(filepath.Join(h.dir, ".ralph", ".circuit_breaker_state.corrupt-*"))
	if !warned || len(matches) != 1 {
		t.Errorf("warned %v, kept %v", warned, matches)
	}
}

func TestEngineNeedsClarification(t *testing.T) {
	out := result("I need input."+"\n---RALPH_STATUS---\nSTATUS: NEEDS_CLARIFICATION\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---\nWhich database should I use?", "")
	h := newHarness(t, openPlanMD, []call{{out: out}}, nil)
	res := h.run(t)
	if res.Reason != "needs_clarification" || res.ExitCode != 6 {
		t.Fatalf("result %+v", res)
	}
	b, err := os.ReadFile(filepath.Join(h.dir, ".ralph", "clarification.md"))
	if err != nil || !strings.Contains(string(b), "Which database should I use?") {
		t.Errorf("clarification.md: %v %q", err, b)
	}
	if st := h.status(t); !strings.Contains(strings.Join(st.ClarificationQuestions, "|"), "Which database should I use?") {
		t.Errorf("status questions %q", st.ClarificationQuestions)
	}
}

// A plan a person edits while the loop waits between calls is read before
// the next call: the loop ends with it complete, without calling again
// (the Temporal workflow does the same through engine.Look).
func TestEnginePlanEditedBetweenCallsIsSeen(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{
		{out: result("Added login."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{"login.go": "package x\n"}},
	}, func(s *Spec) { s.Policy.Delay = 10 * time.Minute })
	h.clock.onSleep = func() {
		if len(h.agent.invs) == 1 {
			if err := os.WriteFile(filepath.Join(h.dir, ".ralph", "fix_plan.md"), []byte(donePlanMD), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	if res := h.run(t); res.Reason != reason.PlanComplete || res.Loops != 1 || len(h.agent.invs) != 1 {
		t.Fatalf("got %+v after %d calls, want plan_complete after 1", res, len(h.agent.invs))
	}
}
