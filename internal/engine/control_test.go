package engine

import (
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/control"
	"ralph/internal/reason"
	"ralph/internal/store"
)

// withControl gives the harness's engine a request file.
func withControl(t *testing.T, h *harness) control.File {
	t.Helper()
	st, err := store.Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	f := control.Open(st.RalphDir())
	h.engine = New(h.engine.spec, Deps{Agents: []agent.Adapter{h.agent}, Store: st, Sessions: h.sessions, Now: h.clock.Now, Sleep: h.clock.Sleep,
		Emit: func(ev Event) { h.events = append(h.events, ev) }, Control: f})
	return f
}

func eventTypes(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

var working = call{out: result("Worked."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{"a.go": "x"}}

func TestEngineStopsAfterTheCurrentIterationOnRequest(t *testing.T) {
	h := newHarness(t, openPlanMD, nil, nil)
	f := withControl(t, h)
	h.agent.calls = []call{{out: working.out, files: map[string]string{"a.go": "x"},
		during: func() { f.Stop("ralph stop", h.clock.Now()) }}}
	res := h.run(t)
	if res.Reason != reason.Interrupted || res.ExitCode != 130 || res.Loops != 1 {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(res.Message, "ralph stop") {
		t.Errorf("message %q does not say who asked", res.Message)
	}
	if r, _ := f.Read(); r.Stop {
		t.Error("the stop request was left behind for the next run")
	}
	if st := h.status(t); st.ExitReason != string(reason.Interrupted) || st.LoopCount != 1 {
		t.Errorf("status %+v", st)
	}
}

func TestEngineIgnoresAStopLeftFromAnEarlierRun(t *testing.T) {
	done := call{out: result("Everything is done."+block("COMPLETE", true, "PASSING"), ""), plan: donePlanMD, files: map[string]string{"b.go": "x"}}
	h := newHarness(t, openPlanMD, []call{done}, nil)
	f := withControl(t, h)
	f.Stop("ralph stop", h.clock.Now())
	if res := h.run(t); res.Reason != reason.ProjectComplete {
		t.Fatalf("result %+v", res)
	}
}

func TestEnginePausesUntilResumed(t *testing.T) {
	done := call{out: result("Everything is done."+block("COMPLETE", true, "PASSING"), ""), plan: donePlanMD, files: map[string]string{"b.go": "x"}}
	h := newHarness(t, openPlanMD, nil, nil)
	f := withControl(t, h)
	polls := 0
	h.clock.onSleep = func() {
		if r, _ := f.Read(); r.Pause {
			if polls++; polls == 3 {
				f.Resume(h.clock.Now())
			}
		}
	}
	h.agent.calls = []call{{out: working.out, files: working.files, during: func() { f.Pause("monitor", h.clock.Now()) }}, done}
	res := h.run(t)
	if res.Reason != reason.ProjectComplete || h.agent.n != 2 {
		t.Fatalf("result %+v after %d calls", res, h.agent.n)
	}
	types := strings.Join(eventTypes(h.events), " ")
	if !strings.Contains(types, "iteration_end paused resumed iteration_start") {
		t.Errorf("events %s: want the pause between the two iterations", types)
	}
	if polls != 3 {
		t.Errorf("polled %d times while paused, want 3", polls)
	}
}

func TestEnginePausedStatusAndStopWhilePaused(t *testing.T) {
	h := newHarness(t, openPlanMD, nil, nil)
	f := withControl(t, h)
	f.Pause("ralph pause", h.clock.Now())
	var seen store.Status
	h.clock.onSleep = func() {
		seen = h.status(t)
		f.Stop("ralph stop", h.clock.Now())
	}
	res := h.run(t)
	if res.Reason != reason.Interrupted || h.agent.n != 0 {
		t.Fatalf("result %+v after %d calls", res, h.agent.n)
	}
	if seen.Status != "paused" {
		t.Errorf("status while paused: %q", seen.Status)
	}
	if r, _ := f.Read(); !r.Pause || r.Stop {
		t.Errorf("after the stop: %+v; want the pause kept and the stop consumed", r)
	}
}

func TestEngineStopCutsAUsageLimitWaitShort(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{{out: claudeLimit, exit: 1}}, nil)
	f := withControl(t, h)
	h.clock.onSleep = func() {
		if len(h.clock.sleeps) == 5 {
			f.Stop("ralph stop", h.clock.Now())
		}
	}
	res := h.run(t)
	if res.Reason != reason.Interrupted {
		t.Fatalf("result %+v", res)
	}
	var slept time.Duration
	for _, d := range h.clock.sleeps[1:] { // [0] is the agent's own call
		slept += d
	}
	if slept > 10*time.Second {
		t.Errorf("slept %s of a one-hour wait after the stop request", slept)
	}
}

// `ralph session reset` while the loop runs: the session lives in the
// loop's state, so the loop is asked, and its next call starts afresh.
func TestEngineResetsTheSessionOnRequest(t *testing.T) {
	done := call{out: result("Everything is done."+block("COMPLETE", true, "PASSING"), ""), plan: donePlanMD, files: map[string]string{"b.go": "x"}}
	h := newHarness(t, openPlanMD, nil, nil)
	f := withControl(t, h)
	h.agent.calls = []call{{out: working.out, files: working.files, during: func() { f.RequestSessionReset(h.clock.Now()) }}, done}
	if res := h.run(t); res.Reason != reason.ProjectComplete {
		t.Fatalf("result %+v", res)
	}
	if len(h.agent.invs) != 2 || h.agent.invs[1].SessionID != "" {
		t.Fatalf("the second call resumed %q, want a new session", h.agent.invs[1].SessionID)
	}
	if len(h.sessions.resets) == 0 || h.sessions.resets[0] != "manual" {
		t.Errorf("session resets %q, want manual first", h.sessions.resets)
	}
	if r, _ := f.Read(); r.ResetSession {
		t.Error("the request was left behind")
	}
}
