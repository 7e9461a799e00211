package loop

import (
	"fmt"
	"strings"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/ratelimit"
	"ralph/internal/reason"
	"ralph/internal/stop"
)

// Wait kinds (status.json's wait.kind, the wait event's wait_kind).
const (
	WaitRateLimit  = "rate_limit"
	WaitUsageLimit = "usage_limit"
	WaitDelay      = "delay"
	WaitBackoff    = "backoff"
	WaitPaused     = "paused"
	// WaitResources: the machine ran out of disk space or file
	// descriptors; the host retries what failed until they come back.
	WaitResources = "resources"
	// WaitBudget: a daily budget of the fleet is spent (or the calls
	// running may spend it); the host's admission holds the call.
	WaitBudget = "budget"
	// WaitAnswer: the agent asked a person (needs_clarification) and the
	// host can reach one (Policy.Answerable); Control.Answer ends it.
	WaitAnswer = "answer"
)

// Observation is the world as the host saw it just before a decision.
type Observation struct {
	Now time.Time
	// Missing are required files that are gone (integrity); MissingErr an
	// error that kept them from being checked.
	Missing    []string
	MissingErr string
	Plan       stop.Plan
	Control    Control
	// SharedLimits are usage limits other loops of the same host saw on
	// the agents this loop uses (one account): a loop adopts them instead
	// of discovering each with a failed call.
	SharedLimits map[string]AgentLimit
	// Quota are the agents the host has quota on for this loop: another
	// of the agent's accounts is free, and its next call runs under it.
	// A limit the loop saw on the account it ran under does not hold them.
	Quota map[string]bool `json:",omitempty"`
	// Hold is the host's hold on new calls (a fleet's spent daily budget),
	// nil: none. It comes after every decision of the loop's own.
	Hold *Hold
}

// Hold keeps a loop from calling until Until (zero: until the host lifts
// it), for the reason Message; Kind is the wait's kind (WaitBudget).
type Hold struct {
	Kind    string    `json:"kind"`
	Until   time.Time `json:"until,omitzero"`
	Message string    `json:"message"`
	// Allowance, when set, makes the hold conditional: the loop calls
	// while what it spent since the host counted is under it. A host whose
	// loop runs elsewhere learns of its calls late; the loop knows its own
	// at once.
	Allowance *Allowance `json:"allowance,omitempty"`
}

// Allowance is what a loop may still spend: CostUSD and Tokens (input +
// output; 0: no bound) past its totals FromCostUSD and FromTokens.
type Allowance struct {
	CostUSD     float64 `json:"cost_usd,omitempty"`
	Tokens      int64   `json:"tokens,omitempty"`
	FromCostUSD float64 `json:"from_cost_usd"`
	FromTokens  int64   `json:"from_tokens"`
}

// LeftUSD is what an allowance leaves a loop in st to spend (0: no cost
// bound, or no allowance).
func (h *Hold) LeftUSD(st State) float64 {
	if h == nil || h.Allowance == nil || h.Allowance.CostUSD <= 0 {
		return 0
	}
	a := h.Allowance
	// A cent at least: an allowance spent holds the loop before any call.
	return max(a.CostUSD-(st.CostUSD-a.FromCostUSD), 0.01)
}

// holds says whether h keeps a loop in st from calling at now.
func (h *Hold) holds(st State, now time.Time) bool {
	switch {
	case h == nil:
		return false
	case h.Allowance != nil:
		a := h.Allowance
		spent, used := st.CostUSD-a.FromCostUSD, st.Usage.InputTokens+st.Usage.OutputTokens-a.FromTokens
		return (a.CostUSD > 0 && spent >= a.CostUSD) || (a.Tokens > 0 && used >= a.Tokens)
	}
	return h.Until.IsZero() || now.Before(h.Until)
}

// Control is what people have asked of the loop.
type Control struct {
	Pause   bool
	PauseBy string
	Stop    bool
	StopBy  string
	// ResetID identifies a breaker-reset request ("" for none): one that
	// differs from State.ResetID has not been applied yet.
	ResetID  string
	ResetBy  string
	ResetWhy string
	// ResetSession asks that the next call start a new agent session
	// (`ralph session reset` while a loop runs).
	ResetSession bool
	// Answer answers the question the call AnswerTo asked (State.Ask),
	// given by AnswerBy; AnswerLoops, when above 0, is how many loops the
	// run has left after it (a budget spent by the asking call is
	// extended, never shortened).
	Answer      string
	AnswerBy    string
	AnswerTo    int
	AnswerLoops int
}

// StepKind is what the loop does next.
type StepKind int

// Steps.
const (
	Call StepKind = iota + 1
	Wait
	Stop
	// Check: run the verify command on a claimed success (Reason) before
	// it may end the run; the host folds the run with Checked.
	Check
)

func (k StepKind) String() string {
	switch k {
	case Call:
		return "call"
	case Wait:
		return "wait"
	case Stop:
		return "stop"
	case Check:
		return "verify"
	}
	return "?"
}

// Step is Next's answer.
type Step struct {
	Kind StepKind
	// Call: the agent to call (an index into Spec.Agents).
	Agent int
	// Wait: until when (zero: until something changes, as for a pause),
	// and why.
	Until    time.Time
	WaitKind string
	// Stop: the reason; Check: the success claimed.
	Reason reason.Reason
	// Message says why, for people.
	Message string
	// ResetSession says why the state no longer holds the agent session
	// (an agent switch: a session id means nothing to another agent's
	// CLI; an expired session; a person's request), for hosts that keep a
	// history of sessions.
	ResetSession string
	// Notes are things that changed, for people (a breaker reset applied,
	// an agent switch).
	Notes []Note
}

// Note is something a step changed that people should hear about.
type Note struct {
	Type    string // EventAgentSwitch, EventWarning, …
	Agent   string
	Message string
}

// Next decides what happens before the next call: stop, wait, or call which
// agent. Stops come first (a stop request, an open breaker, missing files,
// a spent budget, a finished plan), so the loop never waits for a call it
// will not make; every wait is cut at the runtime budget's end.
func Next(st State, obs Observation, p Policy) (State, Step) {
	st = st.clone()
	now := obs.Now
	var notes []Note
	stopNow := func(r reason.Reason, msg string) (State, Step) {
		return st, Step{Kind: Stop, Reason: r, Message: msg, Notes: notes}
	}
	c := obs.Control
	if st.Ask.Waiting() && !p.Answerable {
		// Nobody here answers: the run ends with the question, whatever
		// else was asked meanwhile.
		return stopNow(reason.NeedsClarification, fmt.Sprintf("the agent needs clarification: %d question(s)", len(st.Ask.Questions)))
	}
	if c.Stop {
		return stopNow(reason.Interrupted, "stopped on request by "+orSomebody(c.StopBy))
	}
	if c.ResetID != "" {
		var n Note
		var applied bool
		if st, n, applied = ResetBreaker(st, now, BreakerReset{ID: c.ResetID, By: c.ResetBy, Why: c.ResetWhy}); applied {
			notes = append(notes, n)
		}
	}
	if st.Breaker.Status == breaker.Open {
		msg := "circuit breaker is OPEN: " + st.Breaker.Message
		if at := st.Breaker.ResumeAt(p.Breaker); !at.IsZero() {
			msg += fmt.Sprintf(" (cooldown until %s; `ralph circuit reset` closes it)", at.Format(time.RFC3339))
		}
		return stopNow(reason.BreakerOpen, msg)
	}
	if obs.MissingErr != "" {
		return stopNow(reason.IntegrityFailure, obs.MissingErr)
	}
	if len(obs.Missing) > 0 {
		return stopNow(reason.IntegrityFailure, fmt.Sprintf("required files are missing: %s", strings.Join(obs.Missing, ", ")))
	}
	deadline := time.Time{}
	if p.Budget.MaxRuntime > 0 {
		deadline = st.Run.StartedAt.Add(p.Budget.MaxRuntime)
	}
	wait := func(kind string, until time.Time, msg string) (State, Step) {
		if !deadline.IsZero() && (until.IsZero() || until.After(deadline)) {
			until = deadline
		}
		return st, Step{Kind: Wait, WaitKind: kind, Until: until, Message: msg, Notes: notes}
	}
	loops := Budget{FirstLoop: st.Run.FirstLoop}.Used(st.Loop)
	budget := p.Budget
	if st.Ask.Waiting() {
		// Before the budgets: a question asked by the run's last allowed
		// call still waits for its answer, which may grant more loops.
		var answered bool
		if st, answered = Answer(st, c.AnswerTo, c.Answer, c.AnswerBy); !answered {
			return wait(WaitAnswer, time.Time{}, fmt.Sprintf("the agent asks (loop %d): %s", st.Ask.Loop, strings.Join(st.Ask.Questions, " / ")))
		}
		if left := budget.MaxLoops + st.Run.Granted - loops; budget.MaxLoops > 0 && c.AnswerLoops > left {
			st.Run.Granted += c.AnswerLoops - left
		}
		notes = append(notes, Note{Type: EventResumed, Message: "answered by " + orSomebody(c.AnswerBy)})
	}
	if budget.MaxLoops > 0 {
		budget.MaxLoops += st.Run.Granted
	}
	used := stop.Usage{Loops: loops, Elapsed: now.Sub(st.Run.StartedAt), CostUSD: st.CostUSD - st.Run.FirstCost}
	if d := stop.BeforeCall(obs.Plan, used, budget); d.Stop {
		switch {
		case !gate(d.Reason, p):
			return stopNow(d.Reason, d.Message)
		case !st.Verify.Retry:
			// A plan complete before the call is a claim like any other.
			return st, Step{Kind: Check, Reason: d.Reason, Message: d.Message, Notes: notes}
		}
		// The check failed on this tree: the agent is called to fix it.
	}
	if c.Pause {
		return wait(WaitPaused, time.Time{}, "paused by "+orSomebody(c.PauseBy)+"; `ralph resume` (or p in the monitor) continues")
	}
	if now.Before(st.Pause.Until) {
		msg := "the pause between iterations"
		if st.Pause.Kind == WaitBackoff {
			msg = "the last call failed; backing off before the next"
		}
		return wait(st.Pause.Kind, st.Pause.Until, msg)
	}
	st.Pause = Pause{}
	lim := ratelimit.New(p.Limits, st.Calls)
	if ok, until := lim.Allow(now); !ok {
		return wait(WaitRateLimit, until, fmt.Sprintf("%d calls in the last hour", lim.CallsInWindow(now)))
	}

	names := p.agents()
	st.AgentLimits = adoptLimits(st.AgentLimits, obs.SharedLimits, names, now)
	if len(st.AgentLimits) > 0 {
		// A copy: the state before the decision stays as it was.
		own := make(map[string]AgentLimit, len(st.AgentLimits))
		for n, l := range st.AgentLimits {
			if now.Before(l.Until) && !obs.Quota[n] {
				own[n] = l
			}
		}
		st.AgentLimits = own
	}
	if len(st.AgentLimits) == 0 {
		st.AgentLimits = nil
	}
	idx, free := chooseAgent(names, st.AgentLimits, now)
	if !free {
		l := st.AgentLimits[names[idx]]
		if p.ExitOnUsageLimit {
			return stopNow(reason.UsageLimit, l.Message)
		}
		return wait(WaitUsageLimit, l.Until, l.Message)
	}
	if h := obs.Hold; h.holds(st, now) {
		return wait(h.Kind, h.Until, h.Message)
	}
	step := Step{Kind: Call, Agent: idx, Notes: notes}
	switch {
	case c.ResetSession:
		st, step.ResetSession = ForgetSession(st), SessionManual
	case sessionExpired(st.Session, now, p.SessionExpiry):
		step.Notes = append(step.Notes, Note{Type: EventWarning, Message: fmt.Sprintf("agent session %s expired (started %s, expiry %s); starting a new one",
			st.Session.ID, st.Session.Started.UTC().Format(time.RFC3339), p.SessionExpiry)})
		st, step.ResetSession = ForgetSession(st), SessionExpired
	}
	if cur := indexOf(names, st.Agent); cur != idx {
		from, to := st.Agent, names[idx]
		if l, held := st.AgentLimits[from]; held {
			step.Message = fmt.Sprintf("switching from %s to %s: %s is held by a usage limit until %s", from, to, from, l.Until.UTC().Format("Jan 2 15:04 MST"))
		} else {
			step.Message = fmt.Sprintf("switching back from %s to %s: its usage limit has reset", from, to)
		}
		st.Agent = to
		st, step.ResetSession = ForgetSession(st), SessionAgentSwitch
		step.Notes = append(step.Notes, Note{Type: EventAgentSwitch, Agent: to, Message: step.Message})
	}
	return st, step
}

// adoptLimits adds to own the shared limits on agents in names that hold
// longer than what the loop knows; own is not modified.
func adoptLimits(own, shared map[string]AgentLimit, names []string, now time.Time) map[string]AgentLimit {
	for _, n := range names {
		l, ok := shared[n]
		if !ok || !now.Before(l.Until) {
			continue
		}
		if mine, held := own[n]; held && !mine.Until.Before(l.Until) {
			continue
		}
		m := make(map[string]AgentLimit, len(own)+1)
		for k, v := range own {
			m[k] = v
		}
		m[n] = l
		own = m
	}
	return own
}

func indexOf(names []string, n string) int {
	for i, x := range names {
		if x == n {
			return i
		}
	}
	return 0
}

func orSomebody(by string) string {
	if by == "" {
		return "a request"
	}
	return by
}
