package loop

import (
	"fmt"
	"slices"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/ratelimit"
	"ralph/internal/stop"
)

// StateVersion is the version of the State document. Version 0 is the
// older .loop_state, which held only the counters: its breaker and rate
// limit lived in files of their own (migrated by the store). Version 2
// kept the agent session outside (.claude_session_id, the daemon's
// agent_session column, a workflow's input): hosts adopt it on reading a
// version-2 document (AdoptSession).
const StateVersion = 3

// State is everything the loop carries from one iteration to the next, in
// one document: it is saved whole, atomically, after every iteration, and a
// restarted loop resumes from it. It round-trips through JSON exactly, so a
// host may keep it anywhere (a file, a database row, a workflow's history).
type State struct {
	Version int `json:"version"`
	// Loop counts the iterations ever made on this project.
	Loop int `json:"loop_count"`
	// Run holds the baselines of the current run: the budgets count what
	// this run spent, not the project's history.
	Run Run `json:"run"`

	Breaker breaker.State   `json:"breaker"`
	Stop    stop.State      `json:"stop"`
	Calls   ratelimit.State `json:"rate_limit"`

	Tokens  int64         `json:"total_tokens"`
	CostUSD float64       `json:"total_cost_usd"`
	Usage   analyze.Usage `json:"usage"` // totals by kind
	// Session is the agent session the next call resumes (Resume).
	Session AgentSession `json:"agent_session,omitzero"`
	// SessionUsage is what the agent last reported for the session it
	// reported, for agents whose reports add up a resumed session (see
	// agent.Capabilities): only the growth is the call's own.
	SessionUsage SessionUsage `json:"session_usage,omitzero"`

	// Agent is the agent in use and AgentLimits the usage limits holding
	// agents back, so a restart neither calls a held agent nor forgets
	// that it switched to a fallback.
	Agent       string                `json:"agent,omitempty"`
	AgentLimits map[string]AgentLimit `json:"agent_limits,omitempty"`

	// Backoff is the pause after the next failed call (0: none yet).
	Backoff time.Duration `json:"backoff,omitempty"`
	// Pause is the wait the last iteration asked for before the next call
	// (a delay or a failure back-off).
	Pause Pause `json:"pause,omitzero"`

	// Last is what the last iteration said, for the next call's context
	// and for people.
	Last Last `json:"last,omitzero"`
	// Corrections are sentences for the next call's context: what
	// contradicted the agent last time.
	Corrections []string `json:"corrections,omitempty"`
	// ResetID is the last breaker-reset request applied, so a request
	// made while the loop runs is applied once and not overwritten.
	ResetID string `json:"reset_id,omitempty"`
	// Verify is where the verify gate stands (Policy.Verify).
	Verify VerifyState `json:"verify,omitzero"`
	// Ask is the question the last call put to a person, from when it was
	// asked until its answer has gone to the next call: a loop restarted
	// meanwhile (a daemon's restart) waits for the same answer again.
	Ask Ask `json:"ask,omitzero"`
}

// Run is the current run's baselines.
type Run struct {
	StartedAt time.Time `json:"started_at,omitzero"`
	FirstLoop int       `json:"first_loop"`
	FirstCost float64   `json:"first_cost_usd"`
	// Granted are loops a person added to the run's budget while it ran
	// (an answer to a question asked with the budget spent).
	Granted int `json:"granted_loops,omitempty"`
}

// Pause is a wait before the next call.
type Pause struct {
	Until time.Time `json:"until,omitzero"`
	Kind  string    `json:"kind,omitempty"` // WaitDelay or WaitBackoff
}

// Last is what the last iteration said.
type Last struct {
	Summary string `json:"summary,omitempty"`
	// Confidence is the last analysis's confidence_score (status.json shows it).
	Confidence *int     `json:"confidence_score,omitempty"`
	Questions  []string `json:"questions,omitempty"` // when it needs clarification
}

// SessionUsage is an agent session's usage as last reported.
type SessionUsage struct {
	ID       string        `json:"id"`
	Reported analyze.Usage `json:"reported"`
}

// AgentLimit is a provider usage limit that holds one agent back.
type AgentLimit struct {
	Until   time.Time `json:"until"`
	Message string    `json:"message,omitempty"`
}

// Validate reports a document this package never writes, so a hand-edited
// or damaged file is noticed instead of trusted.
func (s State) Validate() error {
	switch {
	case s.Version < 0 || s.Version > StateVersion:
		return fmt.Errorf("unknown state version %d", s.Version)
	case s.Loop < 0 || s.Loop > 1<<40:
		return fmt.Errorf("loop count %d is out of range", s.Loop)
	case s.Tokens < 0 || s.CostUSD < 0:
		return fmt.Errorf("negative totals (%d tokens, $%.2f)", s.Tokens, s.CostUSD)
	case s.Backoff < 0:
		return fmt.Errorf("negative back-off %s", s.Backoff)
	}
	if s.Version >= 2 && s.Breaker.Status != "" {
		if err := s.Breaker.Validate(); err != nil {
			return err
		}
	}
	return s.Calls.Validate()
}

// clone copies what a step may change, so that two steps from the same
// state never see each other's writes.
func (s State) clone() State {
	if s.AgentLimits != nil {
		m := make(map[string]AgentLimit, len(s.AgentLimits))
		for k, v := range s.AgentLimits {
			m[k] = v
		}
		s.AgentLimits = m
	}
	s.Corrections = append([]string(nil), s.Corrections...)
	if len(s.Corrections) == 0 {
		s.Corrections = nil
	}
	s.Calls.Calls = append([]ratelimit.Call(nil), s.Calls.Calls...)
	if len(s.Calls.Calls) == 0 {
		s.Calls.Calls = nil
	}
	s.Ask.Questions = append([]string(nil), s.Ask.Questions...)
	if len(s.Ask.Questions) == 0 {
		s.Ask.Questions = nil
	}
	return s
}

// Begin starts a run from a loaded state at now: the budgets count from
// here, a breaker whose cooldown has passed may try again, calls that left
// the rate-limit window are dropped, and a pause asked for by a previous
// run is not waited out again. It returns what changed for people to read.
func Begin(st State, now time.Time, p Policy) (State, []string) {
	st = st.clone()
	st.Version = StateVersion
	st.Run = Run{StartedAt: now, FirstLoop: st.Loop, FirstCost: st.CostUSD}
	st.Pause, st.Backoff = Pause{}, 0
	// Each run proves its own completion.
	st.Verify = VerifyState{}
	if !p.Answerable {
		// Where nobody answers (ralph run), a person answers in the files
		// and runs again: the question asked last time is no wait.
		st.Ask = Ask{}
	}
	if st.Breaker.Status == "" {
		st.Breaker = breaker.New(now)
	}
	var notes []string
	var d breaker.Decision
	st.Breaker, d = st.Breaker.OnStart(now, p.Breaker)
	if d.Changed() {
		notes = append(notes, fmt.Sprintf("circuit breaker %s → %s: %s", d.From, d.To, d.Message))
	}
	lim := ratelimit.New(p.Limits, st.Calls)
	lim.Prune(now)
	st.Calls = lim.State()
	if len(st.Calls.Calls) == 0 {
		st.Calls.Calls = nil
	}
	// A restarted run goes on with the agent it was using, if that one is
	// still configured; Next switches as the limits say.
	if names := p.agents(); !slices.Contains(names, st.Agent) {
		st.Agent = names[0]
	}
	return st, notes
}
