package engine

import (
	"strings"
	"sync"
	"testing"

	"ralph/internal/control"
	"ralph/internal/loop"
	"ralph/internal/reason"
)

// memControl is a daemon's controller: requests in memory, answers taken.
type memControl struct {
	mu  sync.Mutex
	req control.Request
}

func (c *memControl) Read() (control.Request, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.req, nil
}
func (c *memControl) ClearStop() error {
	c.set(func(r *control.Request) { r.Stop = false })
	return nil
}
func (c *memControl) ClearReset(string) error {
	c.set(func(r *control.Request) { r.ResetID = "" })
	return nil
}
func (c *memControl) ClearAnswer(to int) error {
	c.set(func(r *control.Request) {
		if r.AnswerTo == to {
			r.Answer, r.AnswerTo = "", 0
		}
	})
	return nil
}
func (c *memControl) set(f func(*control.Request)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.req)
}

var asks = call{out: result("I cannot pick a database.\n---CLARITY_STATUS---\nSTATUS: NEEDS_CLARIFICATION\nCLARIFICATION_QUESTIONS: PostgreSQL or SQLite?\n---END_CLARITY_STATUS---", "")}

// Where a person can answer (ralph serve), a question is a wait in the same
// run: the status shows it with the questions, the answer goes into the
// next call's prompt, and the loop goes on.
func TestEngineWaitsForTheAnswerToAQuestion(t *testing.T) {
	done := call{out: result("Used SQLite."+block("COMPLETE", true, "PASSING"), ""), plan: donePlanMD, files: map[string]string{"db.go": "x"}}
	h := newHarness(t, openPlanMD, []call{asks, done}, func(s *Spec) { s.Policy.Answerable = true })
	ctl := &memControl{}
	h.engine.deps.Control = ctl
	polls := 0
	h.clock.onSleep = func() {
		if polls++; polls == 3 {
			st := h.status(t)
			if st.Status != "waiting" || st.Wait == nil || st.Wait.Kind != loop.WaitAnswer || len(st.ClarificationQuestions) != 1 {
				t.Errorf("status while it waits: %+v", st)
			}
			ctl.set(func(r *control.Request) { r.Answer, r.AnswerBy, r.AnswerTo = "Use SQLite.", "cli", 1 })
		}
	}
	res := h.run(t)
	if res.Reason != reason.ProjectComplete || h.agent.n != 2 || res.Loops != 2 {
		t.Fatalf("result %+v after %d calls", res, h.agent.n)
	}
	if p := h.agent.invs[1].Prompt; !strings.Contains(p, "Q: PostgreSQL or SQLite?\nA: Use SQLite.") {
		t.Errorf("the answered call's prompt:\n%s", p)
	}
	if h.agent.invs[1].SessionID != "s1" {
		t.Errorf("the answered call resumed session %q, want the one that asked", h.agent.invs[1].SessionID)
	}
	types := strings.Join(eventTypes(h.events), " ")
	if strings.Count(" "+types, " "+loop.EventStart+" ") != 1 || !strings.Contains(types, "iteration_end wait resumed iteration_start") {
		t.Errorf("events %s: want one run, the wait for the answer between its two calls", types)
	}
	if r, _ := ctl.Read(); r.Answer != "" {
		t.Errorf("the answer was left in the controller: %+v", r)
	}
}

// A stop ends the wait and keeps the question (and the session that asked)
// in the saved state: a restarted loop waits for the same answer and goes
// on with it.
func TestEngineStopEndsTheWaitAndARestartRecoversIt(t *testing.T) {
	done := call{out: result("Used SQLite."+block("COMPLETE", true, "PASSING"), ""), plan: donePlanMD, files: map[string]string{"db.go": "x"}}
	h := newHarness(t, openPlanMD, []call{asks, done}, func(s *Spec) { s.Policy.Answerable = true })
	ctl := &memControl{}
	h.engine.deps.Control = ctl
	h.clock.onSleep = func() { ctl.set(func(r *control.Request) { r.Stop, r.StopBy = true, "telegram" }) }
	if res := h.run(t); res.Reason != reason.Interrupted || h.agent.n != 1 {
		t.Fatalf("stopped: %+v after %d calls", res, h.agent.n)
	}
	if st := h.engine.State(); !st.Ask.Waiting() || st.Session.ID != "s1" {
		t.Fatalf("after the stop: ask %+v, session %q", st.Ask, st.Session.ID)
	}
	// The next run (a restarted daemon): the answer is in its controller.
	h.clock.onSleep = nil
	ctl.set(func(r *control.Request) { r.Answer, r.AnswerTo = "Use SQLite.", 1 })
	h.engine = New(h.engine.spec, h.engine.deps)
	if res := h.run(t); res.Reason != reason.ProjectComplete || h.agent.n != 2 || res.Loops != 2 {
		t.Fatalf("after the restart: %+v after %d calls", res, h.agent.n)
	}
	if inv := h.agent.invs[1]; !strings.Contains(inv.Prompt, "A: Use SQLite.") || inv.SessionID != "s1" {
		t.Errorf("the answered call: session %q, prompt:\n%s", inv.SessionID, inv.Prompt)
	}
}
