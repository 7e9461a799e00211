package breaker

import (
	"fmt"
	"strings"
	"time"

	"ralph/internal/reason"
)

// Status is the breaker's state. The strings are the ones the bash version of
// Ralph wrote to .circuit_breaker_state, so old files keep loading.
type Status string

// Breaker states.
const (
	Closed   Status = "CLOSED"
	HalfOpen Status = "HALF_OPEN"
	Open     Status = "OPEN"
)

func (s Status) valid() bool { return s == Closed || s == HalfOpen || s == Open }

// Reason says why the breaker opened.
type Reason string

// Reasons for opening.
const (
	ReasonNoProgress       Reason = "no_progress"
	ReasonSameError        Reason = "same_error"
	ReasonOutputDecline    Reason = "output_decline"
	ReasonRepeatedFailures Reason = "repeated_failures"
	ReasonBlocked          Reason = "blocked"
	ReasonPermissionDenied Reason = "permission_denied"
)

func (r Reason) valid() bool {
	switch r {
	case ReasonNoProgress, ReasonSameError, ReasonOutputDecline,
		ReasonRepeatedFailures, ReasonBlocked, ReasonPermissionDenied:
		return true
	}
	return false
}

// ExitReason is the status.json exit_reason for a loop stopped by a breaker
// opened for r (DESIGN.md): permission denials get their own reason and exit
// code because the user fixes them in configuration, not in the project.
func (r Reason) ExitReason() reason.Reason {
	if r == ReasonPermissionDenied {
		return reason.PermissionDenied
	}
	return reason.BreakerOpen
}

// Limits on what the state keeps, so a long-running loop's state file stays
// small.
const (
	// HistoryLimit is how many transitions the state remembers.
	HistoryLimit = 50
	// DeclineWindow is how many recent output sizes form the decline baseline.
	DeclineWindow = 3
	// maxSampleLines and maxLineLen bound the error sample shown to users.
	maxSampleLines = 5
	maxLineLen     = 300
	// maxDeniedTools bounds the accumulated list of refused tools.
	maxDeniedTools = 20
)

// Observation is what one iteration looked like, gathered by the engine from
// the analyzer, git and the process runner.
type Observation struct {
	At   time.Time // when the iteration ended; stamps transitions
	Loop int       // iteration number

	Progress      bool // git saw changes or commits since the iteration began
	OnlyQuestions bool // the agent asked questions instead of acting

	Errors []string // real error lines from the output (analyze.Analysis.Errors)

	PermissionDenied bool     // the agent was refused at least one tool
	DeniedTools      []string // which ones, e.g. "Bash(npm install)"

	OutputBytes int // size of the agent's output

	AgentFailed bool // non-zero exit, is_error, crash
	TimedOut    bool // the iteration hit its time limit

	Blocked       bool   // the agent reported STATUS: BLOCKED
	BlockedReason string // its stated reason, if any
	// GaveUp: BLOCKED with EXIT_SIGNAL: true — the agent says it cannot go
	// on and asks to stop. No further call will unblock it, so the breaker
	// opens at once instead of spending calls on strikes; a person decides
	// (reset, answer, /ralph retry).
	GaveUp bool
}

// Thresholds configure the rules. A count of 0 turns its rule off (as 0 turns
// MAX_TOKENS_PER_HOUR off); the cooldown may be 0 (retry at the next start).
type Thresholds struct {
	NoProgress           int           // CB_NO_PROGRESS_THRESHOLD
	SameError            int           // CB_SAME_ERROR_THRESHOLD
	PermissionDenial     int           // CB_PERMISSION_DENIAL_THRESHOLD
	OutputDeclinePercent int           // CB_OUTPUT_DECLINE_THRESHOLD, 0..99
	Failure              int           // consecutive agent failures
	Cooldown             time.Duration // CB_COOLDOWN_MINUTES
	AutoReset            bool          // CB_AUTO_RESET: close on every start
}

// DefaultThresholds are the bash tool's defaults plus the failure rule.
func DefaultThresholds() Thresholds {
	return Thresholds{
		NoProgress:           3,
		SameError:            5,
		PermissionDenial:     2,
		OutputDeclinePercent: 70,
		Failure:              5,
		Cooldown:             30 * time.Minute,
	}
}

// Validate reports thresholds that cannot mean anything.
func (t Thresholds) Validate() error {
	var bad []string
	for _, c := range []struct {
		name string
		v    int
	}{
		{"no-progress threshold", t.NoProgress},
		{"same-error threshold", t.SameError},
		{"permission-denial threshold", t.PermissionDenial},
		{"failure threshold", t.Failure},
	} {
		if c.v < 0 {
			bad = append(bad, fmt.Sprintf("%s %d is negative", c.name, c.v))
		}
	}
	if t.OutputDeclinePercent < 0 || t.OutputDeclinePercent > 99 {
		bad = append(bad, fmt.Sprintf("output decline %d%% is outside 0..99", t.OutputDeclinePercent))
	}
	if t.Cooldown < 0 {
		bad = append(bad, fmt.Sprintf("cooldown %s is negative", t.Cooldown))
	}
	if len(bad) > 0 {
		return fmt.Errorf("breaker thresholds: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Transition is one entry of the bounded history.
type Transition struct {
	At      time.Time `json:"timestamp"`
	Loop    int       `json:"loop"`
	From    Status    `json:"from_state"`
	To      Status    `json:"to_state"`
	Reason  Reason    `json:"reason_code,omitempty"`
	Message string    `json:"reason"`
}

// State is the persisted breaker. The JSON names of the fields the bash tool
// wrote are kept, so either program can read the other's file; "reason" is
// the human message there, hence the separate "reason_code".
type State struct {
	Status     Status    `json:"state"`
	LastChange time.Time `json:"last_change,omitzero"`
	OpenedAt   time.Time `json:"opened_at,omitzero"` // when it last opened
	Reason     Reason    `json:"reason_code,omitempty"`
	Message    string    `json:"reason"`
	TotalOpens int       `json:"total_opens"`

	CurrentLoop      int `json:"current_loop"`
	LastProgressLoop int `json:"last_progress_loop"`

	NoProgress        int `json:"consecutive_no_progress"`
	SameError         int `json:"consecutive_same_error"`
	PermissionDenials int `json:"consecutive_permission_denials"`
	Failures          int `json:"consecutive_failures"`

	ErrorSignature string   `json:"error_signature,omitempty"` // of the current same-error streak
	ErrorSample    []string `json:"error_sample,omitempty"`    // its normalised lines, bounded
	DeniedTools    []string `json:"denied_tools,omitempty"`    // refused during the denial streak
	BlockedReason  string   `json:"blocked_reason,omitempty"`  // last BLOCKED reason in the no-progress streak
	// ErrorHistory is the first line of the last ErrorHistoryKeep distinct
	// errors, oldest first: unlike the streak it survives a reset, so a
	// halt report can say what went wrong before.
	ErrorHistory []string `json:"error_history,omitempty"`

	// Trial marks the single probing iteration after a cooldown.
	Trial bool `json:"trial,omitempty"`
	// OutputSizes are the last DeclineWindow non-zero output sizes, oldest first.
	OutputSizes []int `json:"recent_output_bytes,omitempty"`

	History []Transition `json:"history,omitempty"`
}

// New is a closed breaker with no history.
func New(now time.Time) State {
	return State{Status: Closed, LastChange: now}
}

// CanExecute reports whether the loop may run another iteration.
func (s State) CanExecute() bool { return s.Status != Open }

// ResumeAt is when [State.OnStart] will let an open breaker try again
// (zero when the breaker is not open or its opening time is unknown).
func (s State) ResumeAt(th Thresholds) time.Time {
	if s.Status != Open {
		return time.Time{}
	}
	at := s.openedAt()
	if at.IsZero() {
		return time.Time{}
	}
	return at.Add(max(th.Cooldown, 0))
}

// openedAt falls back to last_change for files from the bash tool, which had
// no opened_at before its cooldown support.
func (s State) openedAt() time.Time {
	if !s.OpenedAt.IsZero() {
		return s.OpenedAt
	}
	return s.LastChange
}

// clone copies the slices so that a step never writes into the caller's
// backing arrays: two steps from the same state must not see each other.
func (s State) clone() State {
	s.ErrorSample = append([]string(nil), s.ErrorSample...)
	s.ErrorHistory = append([]string(nil), s.ErrorHistory...)
	s.DeniedTools = append([]string(nil), s.DeniedTools...)
	s.OutputSizes = append([]int(nil), s.OutputSizes...)
	s.History = append([]Transition(nil), s.History...)
	return s
}

// Decision is what a step concluded.
type Decision struct {
	From, To    Status
	Reason      Reason    // why it is open (To == Open)
	Message     string    // for people; set when the status changed or is OPEN
	DeniedTools []string  // for ReasonPermissionDenied: the tools to allow
	ResumeAt    time.Time // for OPEN: when the cooldown ends (zero if unknown)
}

// Changed reports a transition.
func (d Decision) Changed() bool { return d.From != d.To }

// Halt reports that the loop must stop.
func (d Decision) Halt() bool { return d.To == Open }

// Err is a *TripError when the loop must stop, nil otherwise, so policies
// can branch with errors.As.
func (d Decision) Err() error {
	if !d.Halt() {
		return nil
	}
	return &TripError{Reason: d.Reason, Message: d.Message, DeniedTools: d.DeniedTools, ResumeAt: d.ResumeAt}
}

// TripError is an open breaker as an error.
type TripError struct {
	Reason      Reason
	Message     string
	DeniedTools []string
	ResumeAt    time.Time
}

func (e *TripError) Error() string {
	if e.Reason == "" {
		return "circuit breaker open: " + e.Message
	}
	return fmt.Sprintf("circuit breaker open (%s): %s", e.Reason, e.Message)
}

// record moves s to status to and appends the transition to the bounded
// history. It is the only place that changes Status.
func (s *State) record(at time.Time, loop int, to Status, reason Reason, msg string) {
	from := s.Status
	s.Status, s.Reason, s.Message, s.LastChange = to, reason, msg, at
	if to == Open {
		s.OpenedAt = at
		s.TotalOpens++
	}
	if to != HalfOpen {
		s.Trial = false
	}
	s.History = append(s.History, Transition{At: at, Loop: loop, From: from, To: to, Reason: reason, Message: msg})
	if n := len(s.History) - HistoryLimit; n > 0 {
		s.History = append(s.History[:0:0], s.History[n:]...)
	}
}

// decision describes the current state after a step from status from.
func (s State) decision(from Status, th Thresholds) Decision {
	d := Decision{From: from, To: s.Status}
	if s.Status == Open || d.Changed() {
		d.Message = s.Message
	}
	if s.Status == Open {
		d.Reason = s.Reason
		d.ResumeAt = s.ResumeAt(th)
		if s.Reason == ReasonPermissionDenied {
			d.DeniedTools = append([]string(nil), s.DeniedTools...)
		}
	}
	return d
}
