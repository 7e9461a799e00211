package loop

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/ratelimit"
	"ralph/internal/reason"
	"ralph/internal/stop"
)

func begun(p Policy) State {
	st, _ := Begin(State{}, t0, p)
	return st
}

// shared builds SharedLimits: agent name, time from t0, …
func shared(kv ...any) map[string]AgentLimit {
	m := map[string]AgentLimit{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = AgentLimit{Until: t0.Add(kv[i+1].(time.Duration)), Message: "usage limit seen by another loop"}
	}
	return m
}

// asked is a state whose third call asked a question.
func asked(st State) State {
	st.Loop = 3
	st.Ask = Ask{Loop: 3, Questions: []string{"PostgreSQL or SQLite?"}}
	return st
}

func answerable(p *Policy) { p.Answerable = true }

func TestNext(t *testing.T) {
	donePlan := stop.Plan{Known: true, Total: 3}
	full := func() ratelimit.State { // 100 calls in the last hour, the oldest at t0-50m
		var s ratelimit.State
		for i := 0; i < 100; i++ {
			s.Calls = append(s.Calls, ratelimit.Call{At: t0.Add(-50*time.Minute + time.Duration(i)*time.Second)})
		}
		return s
	}
	open := func(st State) State {
		st.Breaker.Status, st.Breaker.Message, st.Breaker.OpenedAt = breaker.Open, "no progress in 3 iterations", t0
		return st
	}
	held := func(names ...string) func(State) State {
		return func(st State) State {
			st.AgentLimits = map[string]AgentLimit{}
			for i, n := range names {
				st.AgentLimits[n] = AgentLimit{Until: t0.Add(time.Duration(i+1) * time.Hour), Message: n + " limit"}
			}
			return st
		}
	}
	cases := []struct {
		name     string
		policy   func(*Policy)
		state    func(State) State
		obs      Observation
		kind     StepKind
		reason   reason.Reason
		waitKind string
		until    time.Time
		agent    int
	}{
		{"an open plan: call the primary", nil, nil, Observation{Plan: openPlan}, Call, "", "", time.Time{}, 0},
		{"a finished plan costs no call", nil, nil, Observation{Plan: donePlan}, Stop, reason.PlanComplete, "", time.Time{}, 0},
		{"a stop request first", nil, nil, Observation{Plan: donePlan, Control: Control{Stop: true, StopBy: "ralph stop"}}, Stop, reason.Interrupted, "", time.Time{}, 0},
		{"an open breaker stops", nil, open, Observation{Plan: openPlan}, Stop, reason.BreakerOpen, "", time.Time{}, 0},
		{"a reset request closes an open breaker and calls", nil, open, Observation{Plan: openPlan, Control: Control{ResetID: "r1"}}, Call, "", "", time.Time{}, 0},
		{"an applied reset request is not applied again", nil, func(st State) State { st = open(st); st.ResetID = "r1"; return st },
			Observation{Plan: openPlan, Control: Control{ResetID: "r1"}}, Stop, reason.BreakerOpen, "", time.Time{}, 0},
		{"missing files", nil, nil, Observation{Plan: openPlan, Missing: []string{".ralph/AGENT.md"}}, Stop, reason.IntegrityFailure, "", time.Time{}, 0},
		{"max loops", func(p *Policy) { p.Budget.MaxLoops = 2 }, func(st State) State { st.Loop = 2; return st },
			Observation{Plan: openPlan}, Stop, reason.MaxLoops, "", time.Time{}, 0},
		{"max cost counts this run only", func(p *Policy) { p.Budget.MaxCost = 1 }, func(st State) State { st.CostUSD, st.Run.FirstCost = 10.5, 10; return st },
			Observation{Plan: openPlan}, Call, "", "", time.Time{}, 0},
		{"paused", nil, nil, Observation{Plan: openPlan, Control: Control{Pause: true}}, Wait, "", WaitPaused, time.Time{}, 0},
		{"a pause ends at the runtime budget", func(p *Policy) { p.Budget.MaxRuntime = time.Hour }, nil,
			Observation{Plan: openPlan, Control: Control{Pause: true}}, Wait, "", WaitPaused, t0.Add(time.Hour), 0},
		{"a back-off is waited out", nil, func(st State) State { st.Pause = Pause{Until: t0.Add(time.Minute), Kind: WaitBackoff}; return st },
			Observation{Plan: openPlan}, Wait, "", WaitBackoff, t0.Add(time.Minute), 0},
		{"no wait when the next decision is a stop", func(p *Policy) { p.Budget.MaxLoops = 1 },
			func(st State) State {
				st.Loop = 1
				st.Pause = Pause{Until: t0.Add(time.Minute), Kind: WaitDelay}
				return st
			},
			Observation{Plan: openPlan}, Stop, reason.MaxLoops, "", time.Time{}, 0},
		{"a full hour waits for the oldest call", nil, func(st State) State { st.Calls = full(); return st },
			Observation{Plan: openPlan}, Wait, "", WaitRateLimit, t0.Add(10 * time.Minute), 0},
		{"a rate-limit wait is cut at the runtime budget", func(p *Policy) { p.Budget.MaxRuntime = 5 * time.Second },
			func(st State) State { st.Calls = full(); return st }, Observation{Plan: openPlan}, Wait, "", WaitRateLimit, t0.Add(5 * time.Second), 0},
		{"the runtime budget spent during a wait stops", func(p *Policy) { p.Budget.MaxRuntime = 5 * time.Second },
			func(st State) State { st.Calls = full(); return st }, Observation{Now: t0.Add(5 * time.Second), Plan: openPlan}, Stop, reason.MaxRuntime, "", time.Time{}, 0},
		{"the primary held: the fallback", nil, held("claude"), Observation{Plan: openPlan}, Call, "", "", time.Time{}, 1},
		{"every agent held: wait for the first reset", nil, held("codex", "claude"), Observation{Plan: openPlan}, Wait, "", WaitUsageLimit, t0.Add(time.Hour), 0},
		{"every agent held, told not to wait", func(p *Policy) { p.ExitOnUsageLimit = true }, held("claude", "codex"),
			Observation{Plan: openPlan}, Stop, reason.UsageLimit, "", time.Time{}, 0},
		{"a limit that has passed is forgotten", nil, held("claude"), Observation{Now: t0.Add(2 * time.Hour), Plan: openPlan}, Call, "", "", time.Time{}, 0},
		// Limits another loop of the host saw on the same agents.
		{"a shared limit on the primary: the fallback, no failed call", nil, nil,
			Observation{Plan: openPlan, SharedLimits: shared("claude", time.Hour)}, Call, "", "", time.Time{}, 1},
		{"shared limits on every agent: wait for the first reset", nil, nil,
			Observation{Plan: openPlan, SharedLimits: shared("claude", 2*time.Hour, "codex", time.Hour)}, Wait, "", WaitUsageLimit, t0.Add(time.Hour), 0},
		{"a shared limit longer than the loop's own wins", nil, held("codex", "claude"),
			Observation{Plan: openPlan, SharedLimits: shared("codex", 3*time.Hour)}, Wait, "", WaitUsageLimit, t0.Add(2 * time.Hour), 0},
		{"a shared limit shorter than the loop's own changes nothing", nil, held("codex", "claude"),
			Observation{Plan: openPlan, SharedLimits: shared("codex", time.Minute)}, Wait, "", WaitUsageLimit, t0.Add(time.Hour), 0},
		{"a passed shared limit is ignored", nil, nil,
			Observation{Plan: openPlan, SharedLimits: shared("claude", -time.Minute)}, Call, "", "", time.Time{}, 0},
		{"a shared limit on an agent the loop does not use is ignored", nil, nil,
			Observation{Plan: openPlan, SharedLimits: shared("gemini", time.Hour)}, Call, "", "", time.Time{}, 0},
		// Accounts: the host has quota on another account of the agent.
		{"the loop's own limit on one account, another account free: the same agent calls", nil, held("codex", "claude"),
			Observation{Plan: openPlan, Quota: map[string]bool{"claude": true}}, Call, "", "", time.Time{}, 0},
		{"quota on the fallback only: the fallback", nil, held("codex", "claude"),
			Observation{Plan: openPlan, Quota: map[string]bool{"codex": true}}, Call, "", "", time.Time{}, 1},
		{"quota on an agent the loop does not use frees nothing", nil, held("codex", "claude"),
			Observation{Plan: openPlan, Quota: map[string]bool{"gemini": true}}, Wait, "", WaitUsageLimit, t0.Add(time.Hour), 0},
		// The host's hold (a spent daily budget of the fleet).
		{"a host's hold waits until it ends", nil, nil,
			Observation{Plan: openPlan, Hold: &Hold{Kind: WaitBudget, Until: t0.Add(5 * time.Hour), Message: "waiting for budget: …"}}, Wait, "", WaitBudget, t0.Add(5 * time.Hour), 0},
		{"a host's hold without an end waits until it is lifted", nil, nil,
			Observation{Plan: openPlan, Hold: &Hold{Kind: WaitBudget, Message: "calls running may spend the rest"}}, Wait, "", WaitBudget, time.Time{}, 0},
		{"a host's hold that has ended holds nothing", nil, nil,
			Observation{Plan: openPlan, Hold: &Hold{Kind: WaitBudget, Until: t0}}, Call, "", "", time.Time{}, 0},
		{"a host's hold is cut at the runtime budget", func(p *Policy) { p.Budget.MaxRuntime = time.Hour }, nil,
			Observation{Plan: openPlan, Hold: &Hold{Kind: WaitBudget, Until: t0.Add(5 * time.Hour)}}, Wait, "", WaitBudget, t0.Add(time.Hour), 0},
		{"an allowance not spent: call", nil, func(st State) State { st.CostUSD = 10.5; return st },
			Observation{Plan: openPlan, Hold: &Hold{Kind: WaitBudget, Allowance: &Allowance{CostUSD: 1, FromCostUSD: 10}}}, Call, "", "", time.Time{}, 0},
		{"an allowance spent: wait until the host counts", nil, func(st State) State { st.CostUSD = 11; return st },
			Observation{Plan: openPlan, Hold: &Hold{Kind: WaitBudget, Allowance: &Allowance{CostUSD: 1, FromCostUSD: 10}}}, Wait, "", WaitBudget, time.Time{}, 0},
		{"an allowance of tokens spent", nil, func(st State) State {
			st.Usage.InputTokens, st.Usage.OutputTokens, st.Usage.CacheReadInputTokens = 900, 100, 50000
			return st
		},
			Observation{Plan: openPlan, Hold: &Hold{Kind: WaitBudget, Allowance: &Allowance{Tokens: 500, FromTokens: 500}}}, Wait, "", WaitBudget, time.Time{}, 0},
		{"the cache's tokens are not the allowance's", nil, func(st State) State { st.Usage.InputTokens, st.Usage.CacheReadInputTokens = 900, 50000; return st },
			Observation{Plan: openPlan, Hold: &Hold{Kind: WaitBudget, Allowance: &Allowance{Tokens: 500, FromTokens: 500}}}, Call, "", "", time.Time{}, 0},
		{"a finished plan stops under a hold", nil, nil,
			Observation{Plan: donePlan, Hold: &Hold{Kind: WaitBudget, Until: t0.Add(5 * time.Hour)}}, Stop, reason.PlanComplete, "", time.Time{}, 0},
		// A question (State.Ask): a wait where a person can answer, else
		// the end of the run with needs_clarification, as ralph run's
		// exit code 6 says.
		{"a question where nobody answers ends the run", nil, asked, Observation{Plan: openPlan}, Stop, reason.NeedsClarification, "", time.Time{}, 0},
		{"a question where nobody answers wins over a stop request", nil, asked,
			Observation{Plan: openPlan, Control: Control{Stop: true}}, Stop, reason.NeedsClarification, "", time.Time{}, 0},
		{"a question where a person answers waits for the answer", answerable, asked, Observation{Plan: openPlan}, Wait, "", WaitAnswer, time.Time{}, 0},
		{"the wait for an answer ends at the runtime budget", func(p *Policy) { p.Answerable, p.Budget.MaxRuntime = true, time.Hour }, asked,
			Observation{Plan: openPlan}, Wait, "", WaitAnswer, t0.Add(time.Hour), 0},
		{"a stop request ends the wait for an answer", answerable, asked,
			Observation{Plan: openPlan, Control: Control{Stop: true, StopBy: "telegram"}}, Stop, reason.Interrupted, "", time.Time{}, 0},
		{"an answer to the question: the next call", answerable, asked,
			Observation{Plan: openPlan, Control: Control{Answer: "SQLite", AnswerTo: 3}}, Call, "", "", time.Time{}, 0},
		{"an answer to an earlier question answers nothing", answerable, asked,
			Observation{Plan: openPlan, Control: Control{Answer: "SQLite", AnswerTo: 1}}, Wait, "", WaitAnswer, time.Time{}, 0},
		{"a question on the run's last loop still waits", func(p *Policy) { p.Answerable, p.Budget.MaxLoops = true, 3 }, asked,
			Observation{Plan: openPlan}, Wait, "", WaitAnswer, time.Time{}, 0},
		{"an answer that grants loops to a spent budget: the next call", func(p *Policy) { p.Answerable, p.Budget.MaxLoops = true, 3 }, asked,
			Observation{Plan: openPlan, Control: Control{Answer: "SQLite", AnswerTo: 3, AnswerLoops: 2}}, Call, "", "", time.Time{}, 0},
		{"an answer that grants nothing to a spent budget: max loops", func(p *Policy) { p.Answerable, p.Budget.MaxLoops = true, 3 }, asked,
			Observation{Plan: openPlan, Control: Control{Answer: "SQLite", AnswerTo: 3}}, Stop, reason.MaxLoops, "", time.Time{}, 0},
		{"an answered question is no wait", nil, func(st State) State { st = asked(st); st.Ask.Answer = "SQLite"; return st },
			Observation{Plan: openPlan}, Call, "", "", time.Time{}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := policy()
			p.Agents = []string{"claude", "codex"}
			if tc.policy != nil {
				tc.policy(&p)
			}
			st := begun(p)
			if tc.state != nil {
				st = tc.state(st)
			}
			if tc.obs.Now.IsZero() {
				tc.obs.Now = t0
			}
			before := mustJSON(t, st)
			next, step := Next(st, tc.obs, p)
			if mustJSON(t, st) != before {
				t.Fatal("Next changed its input")
			}
			if step.Kind != tc.kind || step.Reason != tc.reason || step.WaitKind != tc.waitKind || !step.Until.Equal(tc.until) {
				t.Fatalf("Next = %s %q %q until %v (%s); want %s %q %q until %v", step.Kind, step.Reason, step.WaitKind, step.Until, step.Message,
					tc.kind, tc.reason, tc.waitKind, tc.until)
			}
			if step.Kind == Call && step.Agent != tc.agent {
				t.Errorf("agent %d, want %d", step.Agent, tc.agent)
			}
			if step.Kind == Call && next.Agent != p.Agents[tc.agent] {
				t.Errorf("state agent %q", next.Agent)
			}
		})
	}
}

// The engine's loop for one call: Next then Fold, as a host would run them.
func cycle(t *testing.T, st State, obs Observation, it Iteration, p Policy) (State, Step, Decision) {
	t.Helper()
	st, step := Next(st, obs, p)
	if step.Kind != Call {
		return st, step, Decision{}
	}
	st, d := Fold(st, it, p)
	return st, step, d
}

// An agent that ticks one box per call and answers IN_PROGRESS with
// EXIT_SIGNAL: false has finished a 3-task plan after call 3: the next
// decision is plan_complete, not three more calls and an open breaker.
func TestFinishedPlanCostsNoCall(t *testing.T) {
	p := policy()
	st := begun(p)
	at := t0
	for call := 1; call <= 3; call++ {
		pl := stop.Plan{Known: true, Total: 3, Open: 3 - (call - 1)}
		var step Step
		st, step = Next(st, Observation{Now: at, Plan: pl}, p)
		if step.Kind != Call {
			t.Fatalf("before call %d: %s %q", call, step.Kind, step.Reason)
		}
		at = at.Add(time.Minute)
		var d Decision
		st, d = Fold(st, Iteration{Loop: call, Ended: at, InRepo: true, Changed: true, PlanGain: 1,
			Plan:     stop.Plan{Known: true, Total: 3, Open: 3 - call},
			Observed: an(func(a *analyze.Analysis) { a.ExitSignalExplicit, a.ExitSignal = true, false })}, p)
		if d.Kind == Stop {
			t.Fatalf("call %d stopped: %s", call, d.Reason)
		}
	}
	_, step := Next(st, Observation{Now: at, Plan: stop.Plan{Known: true, Total: 3}}, p)
	if step.Kind != Stop || step.Reason != reason.PlanComplete || step.Reason.ExitCode() != 0 {
		t.Fatalf("after call 3: %s %q, want stop plan_complete", step.Kind, step.Reason)
	}
}

// A failed call's back-off is recorded by Fold and waited out by Next;
// after the last allowed iteration there is no wait at all.
func TestBackoffDoublesAndNeverPrecedesAStop(t *testing.T) {
	p := policy()
	p.FailureBackoff = 30 * time.Second
	st := begun(p)
	at := t0
	var waits []time.Duration
	failing := Iteration{InRepo: true, ExitCode: 1, Plan: openPlan, Observed: an(func(a *analyze.Analysis) { a.IsError = true })}
	for call := 1; call <= 4; call++ {
		for {
			var step Step
			st, step = Next(st, Observation{Now: at, Plan: openPlan}, p)
			if step.Kind == Call {
				break
			}
			if step.Kind != Wait || step.WaitKind != WaitBackoff {
				t.Fatalf("before call %d: %s %q", call, step.Kind, step.WaitKind)
			}
			waits = append(waits, step.Until.Sub(at))
			at = step.Until
		}
		at = at.Add(time.Minute)
		it := failing
		it.Loop, it.Ended = call, at
		st, _ = Fold(st, it, p)
	}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute}
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	p.Budget.MaxLoops = 4
	if _, step := Next(st, Observation{Now: at, Plan: openPlan}, p); step.Kind != Stop || step.Reason != reason.MaxLoops {
		t.Fatalf("after the last allowed call: %s %q, want stop max_loops without a wait", step.Kind, step.Reason)
	}
}

func TestBreakerResetWhileRunning(t *testing.T) {
	p := policy()
	st := begun(p)
	idle := Iteration{InRepo: true, Plan: openPlan, Observed: an(nil)}
	at := t0
	var d Decision
	for call := 1; call <= 3; call++ {
		at = at.Add(time.Minute)
		it := idle
		it.Loop, it.Ended = call, at
		st, _, d = cycle(t, st, Observation{Now: at, Plan: openPlan}, it, p)
	}
	if d.Reason != reason.BreakerOpen {
		t.Fatalf("the breaker did not open: %+v", d)
	}
	st, step := Next(st, Observation{Now: at, Plan: openPlan, Control: Control{ResetID: "r1", ResetBy: "ralph circuit reset"}}, p)
	if step.Kind != Call || st.Breaker.Status != breaker.Closed || st.ResetID != "r1" {
		t.Fatalf("after the reset request: %s, breaker %s", step.Kind, st.Breaker.Status)
	}
	if len(step.Notes) == 0 || !strings.Contains(step.Notes[0].Message, "CLOSED") {
		t.Errorf("notes %+v", step.Notes)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A question on a host where a person answers: the run waits, the answer
// goes to the next call (State.Ask), and that call's fold settles it; the
// budget an answer grants counts from the run's loops.
func TestQuestionWaitsForItsAnswer(t *testing.T) {
	p := policy()
	p.Answerable, p.Budget.MaxLoops = true, 1
	st := begun(p)
	clarify := Iteration{Loop: 1, Ended: t0, InRepo: true, Plan: openPlan, Observed: an(func(a *analyze.Analysis) {
		a.Status, a.ClarificationNeeded, a.ClarificationQuestions = analyze.StatusNeedsClarification, true, []string{"Which DB?"}
	})}
	st, d := Fold(st, clarify, p)
	if d.Kind != Wait || d.Reason != reason.NeedsClarification || d.Label() != "wait:needs_clarification" {
		t.Fatalf("fold of a question: %s %q %q", d.Kind, d.Reason, d.Label())
	}
	if !st.Ask.Waiting() || st.Ask.Loop != 1 || st.Ask.Questions[0] != "Which DB?" {
		t.Fatalf("ask: %+v", st.Ask)
	}
	// The state a restarted host loads waits the same.
	var back State
	if err := json.Unmarshal([]byte(mustJSON(t, st)), &back); err != nil {
		t.Fatal(err)
	}
	back, _ = Begin(back, t0.Add(time.Hour), p)
	if _, step := Next(back, Observation{Now: t0.Add(time.Hour), Plan: openPlan}, p); step.Kind != Wait || step.WaitKind != WaitAnswer ||
		!strings.Contains(step.Message, "Which DB?") {
		t.Fatalf("after a restart: %s %q %s", step.Kind, step.WaitKind, step.Message)
	}
	st, step := Next(st, Observation{Now: t0, Plan: openPlan, Control: Control{Answer: "SQLite", AnswerBy: "cli", AnswerTo: 1, AnswerLoops: 5}}, p)
	if step.Kind != Call || st.Ask.Answer != "SQLite" || st.Ask.By != "cli" || st.Run.Granted != 5 {
		t.Fatalf("answered: %s %+v granted %d", step.Kind, st.Ask, st.Run.Granted)
	}
	if len(step.Notes) != 1 || step.Notes[0].Type != EventResumed || step.Notes[0].Message != "answered by cli" {
		t.Errorf("notes %+v", step.Notes)
	}
	st, d = Fold(st, Iteration{Loop: 2, Ended: t0.Add(time.Minute), InRepo: true, Changed: true, Plan: openPlan, Observed: an(nil)}, p)
	if d.Kind != Call || st.Ask.Loop != 0 || st.Ask.Answer != "" {
		t.Fatalf("after the answered call: %s %+v", d.Kind, st.Ask)
	}
	// Five more loops from loop 1: calls up to loop 6.
	st.Loop = 6
	if _, step := Next(st, Observation{Now: t0, Plan: openPlan}, p); step.Kind != Stop || step.Reason != reason.MaxLoops {
		t.Errorf("the granted budget spent: %s %q", step.Kind, step.Reason)
	}
	st.Loop = 5
	if _, step := Next(st, Observation{Now: t0, Plan: openPlan}, p); step.Kind != Call {
		t.Errorf("within the granted budget: %s %q", step.Kind, step.Reason)
	}
}
