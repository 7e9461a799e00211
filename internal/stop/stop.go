// Package stop decides, from what the agent said, the plan and the budgets,
// whether the loop stops and why. It is pure: the caller passes the state of
// earlier iterations in and gets the next state back, so the same step can run
// in a test table or a durable workflow.
//
// The rules, in the order they are applied after a call:
//
//   - needs_clarification: the agent asked for clarification (STATUS
//     NEEDS_CLARIFICATION, CLARIFICATION_NEEDED). With NoClarify the loop goes
//     on and tells the agent to choose the safest default.
//   - project_complete: EXIT_SIGNAL: true with at least two completion
//     indicators in the same iteration (STATUS COMPLETE, tests passing, no
//     tasks remaining, completion wording, the plan fully checked) and nothing
//     contradicting it (open required plan tasks, failing tests). No extra
//     iteration is spent to confirm.
//   - completion_signals: a contradicted or thin EXIT_SIGNAL: true is answered
//     with what contradicts it; the same claim in the next iteration stops.
//     Without any EXIT_SIGNAL field, STATUS COMPLETE or completion wording in
//     MaxDoneSignals (2) consecutive iterations stops too — unless open plan
//     tasks or failing tests contradict it: wording is answered, not obeyed.
//   - safety_threshold: SafetyThreshold (5) consecutive iterations with at
//     least two completion indicators but no EXIT_SIGNAL field, nothing
//     contradicting them.
//   - test_saturation: MaxTestOnly (3) consecutive test-only iterations.
//
// An explicit EXIT_SIGNAL: false overrides every heuristic: it resets the
// completion, safety and test-only streaks. Before each call: the budgets
// max_loops, max_runtime and max_cost, and plan_complete (every required
// checkbox of fix_plan.md checked, so a finished plan costs no call, whatever
// the agent said last).
package stop

import (
	"fmt"
	"time"

	"ralph/internal/reason"
)

// Reason is why the loop stopped; the stop rules produce a subset of them.
type Reason = reason.Reason

// The reasons these rules decide.
const (
	None               = reason.None
	ProjectComplete    = reason.ProjectComplete
	PlanComplete       = reason.PlanComplete
	CompletionSignals  = reason.CompletionSignals
	TestSaturation     = reason.TestSaturation
	SafetyThreshold    = reason.SafetyThreshold
	NeedsClarification = reason.NeedsClarification
	MaxLoops           = reason.MaxLoops
	MaxRuntime         = reason.MaxRuntime
	MaxCost            = reason.MaxCost
)

// Options are the thresholds; zero values take the defaults.
type Options struct {
	MaxDoneSignals  int  // MAX_CONSECUTIVE_DONE_SIGNALS, default 2
	MaxTestOnly     int  // MAX_CONSECUTIVE_TEST_LOOPS, default 3
	SafetyThreshold int  // default 5
	NoClarify       bool // --no-clarify
}

func (o Options) withDefaults() Options {
	if o.MaxDoneSignals <= 0 {
		o.MaxDoneSignals = 2
	}
	if o.MaxTestOnly <= 0 {
		o.MaxTestOnly = 3
	}
	if o.SafetyThreshold <= 0 {
		o.SafetyThreshold = 5
	}
	return o
}

// Plan is what fix_plan.md says, counting required tasks only.
type Plan struct {
	Known    bool   // the file was read
	Total    int    // required tasks
	Open     int    // required tasks not checked
	NextOpen string // the first open required task, for the agent
}

// Complete reports a plan with tasks, all checked.
func (p Plan) Complete() bool { return p.Known && p.Total > 0 && p.Open == 0 }

// Observation is one iteration as the stop rules see it.
type Observation struct {
	ExitSignal, ExitSignalExplicit bool
	StatusComplete                 bool
	// Blocked: the agent reported STATUS: BLOCKED. Its EXIT_SIGNAL then
	// asks to stop, not to be called done: the breaker halts such a loop.
	Blocked              bool
	HasCompletionSignal  bool // completion wording
	CompletionIndicators int  // from the analysis (plan not included)
	TestsFailing         bool
	TestOnly             bool
	NeedsClarification   bool
	Questions            []string
	Plan                 Plan // after the call
}

// State is what the rules remember between iterations.
type State struct {
	ClaimRejected  bool `json:"claim_rejected"` // the last EXIT_SIGNAL: true was answered with a contradiction
	DoneStreak     int  `json:"done_streak"`    // completion without EXIT_SIGNAL field
	SafetyStreak   int  `json:"safety_streak"`
	TestOnlyStreak int  `json:"test_only_streak"`
}

// Decision is the outcome of a step.
type Decision struct {
	Stop    bool
	Reason  Reason
	Message string
	// Corrections are sentences for the next call's context: what
	// contradicts the agent's claim, or what it should do instead.
	Corrections []string
}

func stopWith(r Reason, format string, args ...any) Decision {
	return Decision{Stop: true, Reason: r, Message: fmt.Sprintf(format, args...)}
}

// Usage is what the run has spent so far.
type Usage struct {
	Loops   int // iterations done
	Elapsed time.Duration
	CostUSD float64
}

// Budget limits a run; zero means no limit.
type Budget struct {
	MaxLoops   int
	MaxRuntime time.Duration
	MaxCost    float64
}

// BeforeCall decides whether the next call is needed at all: a budget spent
// or a finished plan stops the loop before it spends another call. It needs
// no state: an agent that said EXIT_SIGNAL: false while ticking the last box
// has still finished the plan.
func BeforeCall(plan Plan, used Usage, b Budget) Decision {
	switch {
	case b.MaxLoops > 0 && used.Loops >= b.MaxLoops:
		return stopWith(MaxLoops, "reached --max-loops %d", b.MaxLoops)
	case b.MaxRuntime > 0 && used.Elapsed >= b.MaxRuntime:
		return stopWith(MaxRuntime, "ran %s, --max-runtime is %s", used.Elapsed.Round(time.Second), b.MaxRuntime)
	case b.MaxCost > 0 && used.CostUSD >= b.MaxCost:
		return stopWith(MaxCost, "spent $%.2f, --max-cost is $%.2f", used.CostUSD, b.MaxCost)
	}
	if plan.Complete() {
		return stopWith(PlanComplete, "all %d required tasks in fix_plan.md are checked", plan.Total)
	}
	return Decision{}
}

// AfterCall folds one iteration into the state and decides.
func AfterCall(st State, obs Observation, opts Options) (State, Decision) {
	opts = opts.withDefaults()
	var d Decision
	if obs.NeedsClarification {
		if !opts.NoClarify {
			return st, stopWith(NeedsClarification, "the agent needs clarification: %d question(s)", len(obs.Questions))
		}
		d.Corrections = append(d.Corrections, "Do not wait for answers: choose the safest reasonable default, note the assumption in fix_plan.md, and continue.")
	}
	if obs.Blocked {
		// Nothing of a blocked iteration is evidence of completion.
		return State{}, d
	}
	indicators := obs.CompletionIndicators
	if obs.Plan.Complete() {
		indicators++
	}
	contradictions := contradictions(obs)

	switch {
	case obs.ExitSignalExplicit && obs.ExitSignal:
		st.DoneStreak, st.SafetyStreak = 0, 0
		if len(contradictions) == 0 && indicators >= 2 {
			st.ClaimRejected = false
			return st, stopWith(ProjectComplete, "EXIT_SIGNAL: true with %d completion indicators", indicators)
		}
		if st.ClaimRejected {
			st.ClaimRejected = false
			return st, stopWith(CompletionSignals, "EXIT_SIGNAL: true in two consecutive iterations (%s)", joinOr(contradictions, "thin evidence"))
		}
		st.ClaimRejected = true
		if indicators < 2 && len(contradictions) == 0 {
			contradictions = append(contradictions, fmt.Sprintf("only %d completion indicator(s) back it", indicators))
		}
		d.Corrections = append(d.Corrections, "You set EXIT_SIGNAL: true, but "+joinOr(contradictions, "")+
			". Finish that work, or if it is truly done, say so again with EXIT_SIGNAL: true.")
		st.TestOnlyStreak = 0
		return st, d

	case obs.ExitSignalExplicit: // EXIT_SIGNAL: false overrides every heuristic
		return State{}, d
	}

	st.ClaimRejected = false
	// Heuristics only stop a loop nothing contradicts: completion wording
	// beside open plan tasks or failing tests is answered, not obeyed (only
	// the agent's explicit EXIT_SIGNAL: true, repeated, overrules the plan).
	contradicted := len(contradictions) > 0
	if obs.StatusComplete || obs.HasCompletionSignal {
		if !contradicted {
			st.DoneStreak++
		} else {
			st.DoneStreak = 0
		}
		if !contradicted && st.DoneStreak >= opts.MaxDoneSignals {
			return st, stopWith(CompletionSignals, "completion reported in %d consecutive iterations without an EXIT_SIGNAL field", st.DoneStreak)
		}
		msg := "You reported completion without an EXIT_SIGNAL field. If all work is done, end with EXIT_SIGNAL: true in the RALPH_STATUS block"
		if len(contradictions) > 0 {
			msg += "; but " + joinOr(contradictions, "")
		}
		d.Corrections = append(d.Corrections, msg+".")
	} else {
		st.DoneStreak = 0
	}
	if indicators >= 2 && !contradicted {
		st.SafetyStreak++
		if st.SafetyStreak >= opts.SafetyThreshold {
			return st, stopWith(SafetyThreshold, "%d consecutive iterations with completion indicators but no EXIT_SIGNAL field", st.SafetyStreak)
		}
	} else {
		st.SafetyStreak = 0
	}
	if obs.TestOnly {
		st.TestOnlyStreak++
		if st.TestOnlyStreak >= opts.MaxTestOnly {
			return st, stopWith(TestSaturation, "%d consecutive iterations only ran tests", st.TestOnlyStreak)
		}
	} else {
		st.TestOnlyStreak = 0
	}
	return st, d
}

func contradictions(obs Observation) []string {
	var c []string
	if p := obs.Plan; p.Known && p.Total > 0 && p.Open > 0 {
		s := fmt.Sprintf("fix_plan.md still has %d open item(s)", p.Open)
		if p.NextOpen != "" {
			s += fmt.Sprintf(" (next: %q)", truncate(p.NextOpen, 80))
		}
		c = append(c, s)
	}
	if obs.TestsFailing {
		c = append(c, "the tests are failing")
	}
	return c
}

func joinOr(list []string, empty string) string {
	if len(list) == 0 {
		return empty
	}
	s := list[0]
	for _, x := range list[1:] {
		s += " and " + x
	}
	return s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
