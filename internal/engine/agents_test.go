package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/store"
)

// claudeLimit is Claude's usage-limit result with a reset at 21:00 UTC; the
// harness clock starts at 20:00.
const claudeLimit = `{"type":"result","subtype":"success","is_error":true,"session_id":"s1","result":"You've hit your 5-hour limit · resets 9pm (UTC)","api_error":"usage_limit_reached"}` + "\n"

// withFallback adds a second fake agent, "backup", with its own calls.
func withFallback(t *testing.T, h *harness, calls []call, mut func(*Spec)) *fakeAgent {
	t.Helper()
	fb := &fakeAgent{t: t, clock: h.clock, calls: calls, project: h.dir, name: "backup"}
	st, err := store.Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	spec := h.engine.spec
	spec.Agents = append(spec.Agents[:1:1], loop.AgentSpec{Name: "backup", Model: "backup-model"})
	if mut != nil {
		mut(&spec)
	}
	h.engine = New(spec, Deps{Agents: []agent.Adapter{h.agent, fb}, Store: st, Sessions: h.sessions, Now: h.clock.Now, Sleep: h.clock.Sleep,
		Emit: func(ev Event) { h.events = append(h.events, ev) }})
	return fb
}

func TestEngineFallsBackOnUsageLimitAndSwitchesBack(t *testing.T) {
	idle := func(files string) call {
		return call{out: result("Worked."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{files: "x"}, took: 25 * time.Minute}
	}
	h := newHarness(t, openPlanMD, []call{
		{out: claudeLimit, exit: 1},
		{out: result("Everything is done."+block("COMPLETE", true, "PASSING"), ""), plan: donePlanMD, files: map[string]string{"c.go": "x"}},
	}, func(s *Spec) { s.Agents[0].Model = "primary-model" })
	// The fallback works 20:01–20:26 and 20:26–20:51, then 20:51–21:16: by
	// the next pick (21:16) the primary's limit (21:01 with margin) is over.
	fb := withFallback(t, h, []call{idle("a.go"), idle("b.go"), idle("d.go")}, nil)
	res := h.run(t)
	if res.Reason != reason.ProjectComplete {
		t.Fatalf("result %+v", res)
	}
	if fb.n != 3 || h.agent.n != 2 {
		t.Fatalf("calls: primary %d, fallback %d; want 2 and 3", h.agent.n, fb.n)
	}
	if m := fb.invs[0].Model; m != "backup-model" {
		t.Errorf("the fallback got model %q, want its own", m)
	}
	if m := h.agent.invs[1].Model; m != "primary-model" {
		t.Errorf("the primary got model %q after switching back", m)
	}
	if fb.invs[0].SessionID != "" || h.agent.invs[1].SessionID != "" {
		t.Errorf("a session id crossed agents: fallback %q, primary %q", fb.invs[0].SessionID, h.agent.invs[1].SessionID)
	}
	var switches []string
	for _, ev := range h.events {
		if ev.Type == EventAgentSwitch {
			switches = append(switches, ev.Agent)
		}
	}
	if !slices.Equal(switches, []string{"backup", "fake"}) {
		t.Errorf("switch events %v, want to backup and back to fake", switches)
	}
	for _, d := range h.clock.sleeps {
		if d > 30*time.Minute {
			t.Errorf("slept %s although a fallback was free", d)
		}
	}
	var agents []string
	store.ReadMetrics(h.engine.deps.Store.(*store.Store).MetricsFile(), func(_ int, rec json.RawMessage) error {
		var m loop.Metrics
		err := json.Unmarshal(rec, &m)
		agents = append(agents, m.Agent)
		return err
	})
	if want := []string{"fake", "backup", "backup", "backup", "fake"}; !slices.Equal(agents, want) {
		t.Errorf("metrics agents %v, want %v", agents, want)
	}
}

func TestEngineAllAgentsHeldWaitsForTheFirstReset(t *testing.T) {
	codexLimit := `{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again at 8:31 PM."}}` + "\n"
	h := newHarness(t, openPlanMD, []call{
		{out: claudeLimit, exit: 1},
	}, nil)
	fb := withFallback(t, h, []call{
		{out: codexLimit, exit: 1},
		{out: result("Everything is done."+block("COMPLETE", true, "PASSING"), ""), plan: donePlanMD, files: map[string]string{"c.go": "x"}},
	}, nil)
	res := h.run(t)
	if res.Reason != reason.ProjectComplete || fb.n != 2 || h.agent.n != 1 {
		t.Fatalf("result %+v; primary %d calls, fallback %d", res, h.agent.n, fb.n)
	}
	var waits []Event
	for _, ev := range h.events {
		if ev.Type == EventWait {
			waits = append(waits, ev)
		}
	}
	if len(waits) != 1 || waits[0].WaitKind != "usage_limit" || waits[0].Until.Hour() != 20 || waits[0].Until.Minute() != 32 {
		t.Fatalf("waits %+v, want one usage-limit wait until the fallback's reset (20:31 + margin)", waits)
	}
}

func TestEngineExitOnUsageLimitStillFallsBack(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{{out: claudeLimit, exit: 1}}, func(s *Spec) { s.Policy.ExitOnUsageLimit = true })
	fb := withFallback(t, h, []call{{out: claudeLimit, exit: 1}}, nil)
	res := h.run(t)
	if res.Reason != reason.UsageLimit || res.ExitCode != 4 {
		t.Fatalf("result %+v", res)
	}
	if fb.n != 1 {
		t.Errorf("the fallback was called %d times, want once before giving up", fb.n)
	}
}

func TestEngineRestartRemembersAHeldAgent(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{{out: claudeLimit, exit: 1}}, func(s *Spec) { s.Policy.ExitOnUsageLimit = true })
	if res := h.run(t); res.Reason != reason.UsageLimit {
		t.Fatalf("first run: %+v", res)
	}
	// A new run before the reset neither calls the held agent nor forgets it.
	st, _ := store.Open(h.dir)
	again := New(h.engine.spec, Deps{Agents: []agent.Adapter{h.agent}, Store: st, Sessions: h.sessions, Now: h.clock.Now, Sleep: h.clock.Sleep})
	res, err := again.Run(context.Background())
	if err != nil || res.Reason != reason.UsageLimit || h.agent.n != 1 {
		t.Fatalf("second run: %+v, %v after %d calls", res, err, h.agent.n)
	}
}

// cumulativeAgent reports a resumed session's cost as a running total, as
// Claude Code does.
type cumulativeAgent struct{ *fakeAgent }

func (c cumulativeAgent) Capabilities() agent.Capabilities {
	return agent.Capabilities{StructuredOutput: true, CumulativeCost: true}
}

func TestEngineCountsTheGrowthOfACumulativeCost(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{
		{out: strings.Replace(result("Worked."+block("IN_PROGRESS", false, "PASSING"), ""), `"total_cost_usd":0.25`, `"total_cost_usd":0.3`, 1), files: map[string]string{"a.go": "x"}},
		{out: strings.Replace(result("Everything is done."+block("COMPLETE", true, "PASSING"), ""), `"total_cost_usd":0.25`, `"total_cost_usd":0.7`, 1), plan: donePlanMD, files: map[string]string{"b.go": "x"}},
	}, nil)
	st, _ := store.Open(h.dir)
	h.engine = New(h.engine.spec, Deps{Agents: []agent.Adapter{cumulativeAgent{h.agent}}, Store: st, Sessions: h.sessions, Now: h.clock.Now, Sleep: h.clock.Sleep})
	if res := h.run(t); res.Reason != reason.ProjectComplete {
		t.Fatalf("result %+v", res)
	}
	if got := h.status(t).Totals.CostUSD; got < 0.6999 || got > 0.7001 {
		t.Errorf("total cost %v, want 0.7 (the session's running total), not 1.0", got)
	}
	var costs []float64
	store.ReadMetrics(st.MetricsFile(), func(_ int, rec json.RawMessage) error {
		var m loop.Metrics
		err := json.Unmarshal(rec, &m)
		costs = append(costs, m.CostUSD)
		return err
	})
	if len(costs) != 2 || costs[0] != 0.3 || costs[1] < 0.3999 || costs[1] > 0.4001 {
		t.Errorf("per-iteration costs %v, want [0.3 0.4]", costs)
	}
}
