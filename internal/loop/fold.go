package loop

import (
	"fmt"
	"strings"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/ratelimit"
	"ralph/internal/stop"
)

// Exit reasons beyond the stop package's, and the exit codes of DESIGN.md.
const (
	ReasonBreakerOpen      = "circuit_breaker_open"
	ReasonPermissionDenied = "permission_denied"
	ReasonUsageLimit       = "usage_limit"
	ReasonIntegrity        = "integrity_failure"
	ReasonInterrupted      = "interrupted"
)

// ExitCode maps an exit reason to the process exit code.
func ExitCode(reason string) int {
	switch reason {
	case string(stop.ProjectComplete), string(stop.PlanComplete), string(stop.CompletionSignals),
		string(stop.TestSaturation), string(stop.SafetyThreshold):
		return 0
	case ReasonBreakerOpen:
		return 2
	case ReasonPermissionDenied:
		return 3
	case ReasonUsageLimit:
		return 4
	case string(stop.MaxLoops), string(stop.MaxRuntime), string(stop.MaxCost):
		return 5
	case string(stop.NeedsClarification):
		return 6
	case ReasonIntegrity:
		return 7
	case ReasonInterrupted:
		return 130
	}
	return 1
}

// Policy is the configuration the pure steps need.
type Policy struct {
	Breaker          breaker.Thresholds
	Stop             stop.Options
	Limits           ratelimit.Limits
	UsageLimitWait   time.Duration // no reset time known: wait this long
	UsageLimitMargin time.Duration
	ExitOnUsageLimit bool
}

// State is everything the loop carries from one iteration to the next. It
// is serialisable: a crash-restarted loop resumes from it.
type State struct {
	Loop        int             `json:"loop_count"`
	StartedAt   time.Time       `json:"started_at"`
	Breaker     breaker.State   `json:"-"` // persisted in its own file
	Stop        stop.State      `json:"stop"`
	Calls       ratelimit.State `json:"-"` // persisted in its own file
	Tokens      int64           `json:"total_tokens"`
	CostUSD     float64         `json:"total_cost_usd"`
	Usage       analyze.Usage   `json:"usage"` // totals by kind
	LastSummary string          `json:"last_summary"`
	Corrections []string        `json:"corrections"`
	// Agent is the agent in use and AgentLimits the usage limits holding
	// agents back, so a restart neither calls a held agent nor forgets
	// that it switched to a fallback.
	Agent       string                `json:"agent,omitempty"`
	AgentLimits map[string]AgentLimit `json:"agent_limits,omitempty"`
	// SessionUsage is what the agent last reported for the session it
	// reported, for agents whose reports add up a resumed session (see
	// agent.Capabilities): only the growth is the call's own.
	SessionUsage SessionUsage `json:"session_usage,omitzero"`
}

// SessionUsage is an agent session's usage as last reported.
type SessionUsage struct {
	ID       string        `json:"id"`
	Reported analyze.Usage `json:"reported"`
}

// callUsage is what one call used: the report, or for cumulative reports the
// growth since the same session's previous one. A report that shrank (the
// CLI lost its running total) counts in full rather than as a refund, so
// budgets can only err towards stopping early.
func callUsage(prev SessionUsage, a *analyze.Analysis, cumCost, cumTokens bool) (analyze.Usage, SessionUsage) {
	u := a.Usage
	if a.SessionID == "" || (!cumCost && !cumTokens) {
		return u, prev
	}
	next := SessionUsage{ID: a.SessionID, Reported: u}
	if prev.ID != a.SessionID {
		return u, next
	}
	p := prev.Reported
	if cumCost && u.CostUSD >= p.CostUSD {
		u.CostUSD -= p.CostUSD
	}
	if cumTokens && u.InputTokens >= p.InputTokens && u.OutputTokens >= p.OutputTokens &&
		u.CacheReadInputTokens >= p.CacheReadInputTokens && u.CacheCreationInputTokens >= p.CacheCreationInputTokens {
		u.InputTokens -= p.InputTokens
		u.OutputTokens -= p.OutputTokens
		u.CacheReadInputTokens -= p.CacheReadInputTokens
		u.CacheCreationInputTokens -= p.CacheCreationInputTokens
	}
	return u, next
}

// Iteration is what one agent call produced, as measured at the edge.
type Iteration struct {
	Loop      int
	Ended     time.Time
	Analysis  *analyze.Analysis
	ExitCode  int
	TimedOut  bool
	StartErr  error
	InRepo    bool // progress measured by git
	Changed   bool // git saw changes or commits made during the call
	Files     int  // files changed during the call
	PlanGain  int  // plan tasks newly checked
	Plan      stop.Plan
	Questions []string
	// The agent's reports add up a resumed session (agent.Capabilities).
	CumulativeCost, CumulativeTokens bool
}

// Action is what the loop does next.
type Action int

// Actions.
const (
	Continue Action = iota
	Wait            // usage limit: sleep until WaitUntil, then go on with the same work
	Stop
)

// Outcome is a step's verdict.
type Outcome struct {
	Action    Action
	Reason    string // exit reason when stopping
	Message   string
	WaitUntil time.Time
	// Usage is this call's own usage (see callUsage).
	Usage analyze.Usage
	// Productive: the iteration made progress (for logs and the failure backoff).
	Productive bool
	Failed     bool
	// ResetSession: the agent session must not be resumed next time.
	ResetSession string
}

// Fold is the pure step: it folds one iteration into the state and decides.
// The engine runs the agent; everything after the call is decided here.
func Fold(st State, it Iteration, p Policy) (State, Outcome) {
	a := it.Analysis
	if a == nil {
		a = &analyze.Analysis{Status: analyze.StatusUnknown}
	}
	st.Loop = it.Loop
	use, su := callUsage(st.SessionUsage, a, it.CumulativeCost, it.CumulativeTokens)
	st.SessionUsage = su
	cost := use.CostUSD
	st.Tokens += use.Total()
	st.CostUSD += cost
	st.Usage.InputTokens += use.InputTokens
	st.Usage.OutputTokens += use.OutputTokens
	st.Usage.CacheReadInputTokens += use.CacheReadInputTokens
	st.Usage.CacheCreationInputTokens += use.CacheCreationInputTokens
	st.Usage.CostUSD = st.CostUSD
	lim := ratelimit.New(p.Limits, st.Calls)
	lim.Record(it.Ended, use.Total())
	st.Calls = lim.State()
	if a.Summary != "" {
		st.LastSummary = a.Summary
	}
	st.Corrections = nil

	// A usage limit is the provider's, not the agent's fault: the same work
	// resumes after the reset, and the breaker does not count it.
	if a.UsageLimit.Detected {
		reset, has := a.UsageLimit.ResetTime()
		until := ratelimit.UsageLimitWait(it.Ended, reset, has, p.UsageLimitWait, p.UsageLimitMargin)
		msg := fmt.Sprintf("usage limit (%s): %s", a.UsageLimit.Kind, a.UsageLimit.Message)
		if p.ExitOnUsageLimit {
			return st, Outcome{Action: Stop, Reason: ReasonUsageLimit, Message: msg, WaitUntil: until, Failed: true, Usage: use}
		}
		return st, Outcome{Action: Wait, Message: msg, WaitUntil: until, Failed: true, Usage: use}
	}

	progress := it.Changed || it.PlanGain > 0 || a.Status == analyze.StatusComplete
	if !it.InRepo && a.FilesModified > 0 {
		progress = true
	}
	failed := it.StartErr != nil || a.IsError || (it.ExitCode != 0 && !it.TimedOut)
	out := Outcome{Productive: progress, Failed: failed || (it.TimedOut && !progress), Usage: use}

	var denied []string
	for _, d := range a.PermissionDenials {
		if d.Command != "" {
			denied = append(denied, fmt.Sprintf("%s(%s)", d.Tool, d.Command))
		} else {
			denied = append(denied, d.Tool)
		}
	}
	var blockedReason string
	if a.Status == analyze.StatusBlocked {
		blockedReason = firstNonEmpty(a.Recommendation, a.Summary)
	}
	var sd stop.Decision
	st.Stop, sd = stop.AfterCall(st.Stop, stop.Observation{
		ExitSignal: a.ExitSignal, ExitSignalExplicit: a.ExitSignalExplicit,
		StatusComplete: a.Status == analyze.StatusComplete, HasCompletionSignal: a.HasCompletionSignal,
		CompletionIndicators: a.CompletionIndicators, TestsFailing: a.TestsStatus == analyze.TestsFailing,
		TestOnly: a.IsTestOnly, NeedsClarification: a.ClarificationNeeded || a.Status == analyze.StatusNeedsClarification,
		Questions: a.ClarificationQuestions, Plan: it.Plan,
	}, p.Stop)
	// The stop rules go first: an iteration that proves the work done ends
	// the run as done, even if it changed nothing (the breaker would call
	// that "no progress").
	if sd.Stop {
		out.Action, out.Reason, out.Message = Stop, string(sd.Reason), sd.Message
		if sd.Reason.Success() {
			out.ResetSession = "completion"
		}
		return st, out
	}
	var bd breaker.Decision
	st.Breaker, bd = st.Breaker.Step(breaker.Observation{
		At: it.Ended, Loop: it.Loop, Progress: progress,
		OnlyQuestions: a.AskingQuestions && !progress, Errors: a.Errors,
		PermissionDenied: len(denied) > 0, DeniedTools: denied,
		OutputBytes: int(a.OutputBytes), AgentFailed: failed, TimedOut: it.TimedOut,
		Blocked: a.Status == analyze.StatusBlocked, BlockedReason: blockedReason,
	}, p.Breaker)
	if bd.Halt() {
		out.Action, out.Reason, out.Message = Stop, bd.Reason.ExitReason(), bd.Message
		if bd.Reason == breaker.ReasonPermissionDenied {
			out.Message = deniedMessage(bd.DeniedTools, bd.Message)
		}
		out.ResetSession = "circuit_breaker_open"
		return st, out
	}

	st.Corrections = append(st.Corrections, sd.Corrections...)
	if a.AskingQuestions && !a.ClarificationNeeded {
		st.Corrections = append(st.Corrections, "Last iteration you asked questions instead of acting: nobody answers in this loop; choose the most reasonable option yourself and proceed.")
	}
	if len(denied) > 0 {
		st.Corrections = append(st.Corrections, fmt.Sprintf("Last iteration these tool calls were refused: %s. Do not retry them; use the allowed tools (e.g. no pipes or redirects in Bash commands).", strings.Join(limitList(denied, 3), ", ")))
	}
	if a.IsError {
		out.ResetSession = "is_error"
	}
	return st, out
}

func deniedMessage(tools []string, msg string) string {
	if len(tools) == 0 {
		return msg
	}
	return fmt.Sprintf("%s; allow them in .ralphrc, e.g. ALLOWED_TOOLS=\"…,%s\" (or --allowed-tools)", msg, strings.Join(limitList(tools, 3), ","))
}

func limitList(l []string, n int) []string {
	if len(l) > n {
		return append(l[:n:n], fmt.Sprintf("… %d more", len(l)-n))
	}
	return l
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
