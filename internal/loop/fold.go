package loop

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/ratelimit"
	"ralph/internal/reason"
	"ralph/internal/stop"
)

// Iteration is what one agent call produced, as measured at the edge: small
// plain data (never the transcript), so a workflow activity can return it.
type Iteration struct {
	Loop  int    `json:"loop"`
	Agent string `json:"agent,omitempty"`
	// Model is the model the call asked for ("": the agent's default).
	Model    string    `json:"model,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	Ended    time.Time `json:"ended"`
	ExitCode int       `json:"exit_code"`
	TimedOut bool      `json:"timed_out,omitempty"`
	// StartErr is why the agent could not be started ("" when it ran).
	StartErr string `json:"start_error,omitempty"`
	InRepo   bool   `json:"in_repo,omitempty"` // progress measured by git
	Changed  bool   `json:"changed,omitempty"` // git saw changes or commits made during the call
	Files    int    `json:"files,omitempty"`   // files changed during the call
	// LinesAdded and LinesRemoved are what the changed files differ by;
	// Commit is the HEAD a commit during the call left ("" for none).
	LinesAdded   int       `json:"lines_added,omitempty"`
	LinesRemoved int       `json:"lines_removed,omitempty"`
	Commit       string    `json:"commit,omitempty"`
	PlanGain     int       `json:"plan_gain,omitempty"`
	Plan         stop.Plan `json:"plan"`
	Observed     Observed  `json:"observed"`
	// The agent's reports add up a resumed session (agent.Capabilities).
	CumulativeCost   bool `json:"cumulative_cost,omitempty"`
	CumulativeTokens bool `json:"cumulative_tokens,omitempty"`
	// Decisions are the people's decisions on tool calls the call waited
	// on (package gate), in order.
	Decisions []GateDecision `json:"decisions,omitempty"`
}

// Decision is Fold's verdict on one iteration.
type Decision struct {
	Kind    StepKind // Call (go on), Stop, Check (a success to verify first), or Wait (for a person's answer)
	Reason  reason.Reason
	Message string
	// Usage is this call's own usage (see callUsage).
	Usage analyze.Usage
	// Productive: the iteration made progress; Failed: the call failed.
	Productive bool
	Failed     bool
	// UsageLimit: the agent hit one and is held until HeldUntil.
	UsageLimit bool
	HeldUntil  time.Time
	// ResetSession: the agent session must not be resumed next time (the
	// state no longer holds it), and why.
	ResetSession string
}

// Label is the metrics' decision field: "continue", "wait:usage_limit",
// "wait:needs_clarification" or "stop:<reason>".
func (d Decision) Label() string {
	switch {
	case d.Kind == Stop:
		return "stop:" + string(d.Reason)
	case d.Kind == Check:
		return "verify:" + string(d.Reason)
	case d.Kind == Wait:
		return "wait:" + string(d.Reason)
	case d.UsageLimit:
		return "wait:usage_limit"
	}
	return "continue"
}

// callUsage is what one call used: the report, or for cumulative reports the
// growth since the same session's previous one. A report that shrank (the
// CLI lost its running total) counts in full rather than as a refund, so
// budgets can only err towards stopping early.
func callUsage(prev SessionUsage, o Observed, cumCost, cumTokens bool) (analyze.Usage, SessionUsage) {
	u := o.Usage
	if o.SessionID == "" || (!cumCost && !cumTokens) {
		return u, prev
	}
	next := SessionUsage{ID: o.SessionID, Reported: u}
	if prev.ID != o.SessionID {
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

// Fold is the pure step after a call: it folds one iteration into the state
// and decides whether the loop goes on. Waits (a usage limit, a delay, a
// back-off) are recorded in the state for Next to honour, so that a stop
// decided meanwhile is never preceded by a wait.
func Fold(st State, it Iteration, p Policy) (State, Decision) {
	st, d := fold(st, it, p)
	return foldSession(st, it, d, p), d
}

func fold(st State, it Iteration, p Policy) (State, Decision) {
	st = st.clone()
	o := it.Observed
	st.Loop = it.Loop
	use, su := callUsage(st.SessionUsage, o, it.CumulativeCost, it.CumulativeTokens)
	st.SessionUsage = su
	st.Tokens += use.Total()
	st.CostUSD += use.CostUSD
	st.Usage.InputTokens += use.InputTokens
	st.Usage.OutputTokens += use.OutputTokens
	st.Usage.CacheReadInputTokens += use.CacheReadInputTokens
	st.Usage.CacheCreationInputTokens += use.CacheCreationInputTokens
	st.Usage.CostUSD = st.CostUSD
	lim := ratelimit.New(p.Limits, st.Calls)
	lim.Record(it.Ended, use.Total())
	st.Calls = lim.State()
	if o.Summary != "" {
		st.Last.Summary = o.Summary
	}
	score := o.ConfidenceScore
	st.Last.Confidence = &score
	st.Last.Questions = nil
	// The call had the answer (if any): the question is settled.
	st.Ask = Ask{}
	st.Corrections = nil
	st.Pause = Pause{}
	// A call changed the tree: an earlier check no longer speaks for it.
	st.Verify.Retry, st.Verify.Verified = false, false

	// A usage limit is the provider's, not the agent's fault: the same work
	// resumes after the reset (or on a fallback agent at once), and the
	// breaker does not count it.
	if o.UsageLimit.Detected {
		reset, has := o.UsageLimit.ResetTime()
		until := ratelimit.UsageLimitWait(it.Ended, reset, has, p.UsageLimitWait, p.UsageLimitMargin)
		msg := fmt.Sprintf("usage limit (%s): %s", o.UsageLimit.Kind, o.UsageLimit.Message)
		if st.AgentLimits == nil {
			st.AgentLimits = map[string]AgentLimit{}
		}
		st.AgentLimits[st.Agent] = AgentLimit{Until: until, Message: msg}
		d := Decision{Kind: Call, Message: msg, UsageLimit: true, HeldUntil: until, Failed: true, Usage: use}
		if _, free := chooseAgent(p.agents(), st.AgentLimits, it.Ended); !free && p.ExitOnUsageLimit {
			d.Kind, d.Reason = Stop, reason.UsageLimit
		}
		return st, d
	}

	// An agent that cannot work as set up fails the same way every time:
	// stop at once and say what to fix, instead of backing off into the
	// breaker.
	if f := o.SetupFailure; f.Detected {
		return st, Decision{Kind: Stop, Reason: reason.AgentSetup, Message: setupMessage(it.Agent, f), Failed: true, Usage: use,
			ResetSession: "agent_setup_failure"}
	}

	progress := it.Changed || it.PlanGain > 0 || o.Status == analyze.StatusComplete
	if !it.InRepo && o.FilesModified > 0 {
		progress = true
	}
	failed := it.StartErr != "" || o.IsError || (it.ExitCode != 0 && !it.TimedOut)
	d := Decision{Kind: Call, Productive: progress, Failed: failed || (it.TimedOut && !progress), Usage: use}

	var denied []string
	for _, x := range o.PermissionDenials {
		if x.Command != "" {
			denied = append(denied, fmt.Sprintf("%s(%s)", x.Tool, x.Command))
		} else {
			denied = append(denied, x.Tool)
		}
	}
	var blockedReason string
	if o.Status == analyze.StatusBlocked {
		blockedReason = firstNonEmpty(o.Recommendation, o.Summary)
	}
	needsClarification := o.ClarificationNeeded || o.Status == analyze.StatusNeedsClarification
	var sd stop.Decision
	st.Stop, sd = stop.AfterCall(st.Stop, stop.Observation{
		ExitSignal: o.ExitSignal, ExitSignalExplicit: o.ExitSignalExplicit,
		StatusComplete: o.Status == analyze.StatusComplete, Blocked: o.Status == analyze.StatusBlocked,
		HasCompletionSignal:  o.HasCompletionSignal,
		CompletionIndicators: o.CompletionIndicators, TestsFailing: o.TestsStatus == analyze.TestsFailing,
		TestOnly: o.IsTestOnly, NeedsClarification: needsClarification,
		Questions: o.ClarificationQuestions, Plan: it.Plan,
	}, p.Stop)
	// The stop rules go first: an iteration that proves the work done ends
	// the run as done, even if it changed nothing (the breaker would call
	// that "no progress").
	if sd.Stop {
		d.Kind, d.Reason, d.Message = Stop, sd.Reason, sd.Message
		if gate(sd.Reason, p) {
			d.Kind = Check
			return st, d
		}
		if sd.Reason.Success() {
			d.ResetSession = "completion"
		}
		if sd.Reason == reason.NeedsClarification {
			// A wait for a person where one can answer (Policy.Answerable);
			// elsewhere (ralph run) the end it always was, so its records,
			// exit code and stats read as before.
			st.Last.Questions = append([]string(nil), o.ClarificationQuestions...)
			st.Ask = Ask{Loop: it.Loop, Questions: append([]string(nil), o.ClarificationQuestions...)}
			if p.Answerable {
				d.Kind = Wait
			}
		}
		return st, d
	}
	var bd breaker.Decision
	st.Breaker, bd = st.Breaker.Step(breaker.Observation{
		At: it.Ended, Loop: it.Loop, Progress: progress,
		OnlyQuestions: o.AskingQuestions && !progress, Errors: o.Errors,
		PermissionDenied: len(denied) > 0, DeniedTools: denied,
		OutputBytes: int(o.OutputBytes), AgentFailed: failed, TimedOut: it.TimedOut,
		Blocked: o.Status == analyze.StatusBlocked, BlockedReason: blockedReason,
		GaveUp: o.Status == analyze.StatusBlocked && o.ExitSignalExplicit && o.ExitSignal,
	}, p.Breaker)
	if bd.Halt() {
		d.Kind, d.Reason, d.Message = Stop, bd.Reason.ExitReason(), bd.Message
		if bd.Reason == breaker.ReasonPermissionDenied {
			d.Message = deniedMessage(bd.DeniedTools, bd.Message)
		}
		d.ResetSession = "circuit_breaker_open"
		return st, d
	}

	st.Corrections = append(st.Corrections, sd.Corrections...)
	if o.AskingQuestions && !o.ClarificationNeeded {
		st.Corrections = append(st.Corrections, "Last iteration you asked questions instead of acting: nobody answers in this loop; choose the most reasonable option yourself and proceed.")
	}
	if len(denied) > 0 {
		st.Corrections = append(st.Corrections, fmt.Sprintf("Last iteration these tool calls were refused: %s. Do not retry them; use the allowed tools (e.g. no pipes or redirects in Bash commands).", strings.Join(limitList(denied, 3), ", ")))
	}
	if len(st.Corrections) == 0 {
		st.Corrections = nil
	}
	if o.IsError {
		d.ResetSession = "is_error"
	}

	// The pause before the next call: the delay, or after a failure a
	// back-off that doubles up to its cap.
	pause, kind := p.Delay, WaitDelay
	if d.Failed && p.FailureBackoff > 0 {
		b := st.Backoff
		if b == 0 {
			b = p.FailureBackoff
		}
		if b > pause {
			pause, kind = b, WaitBackoff
		}
		st.Backoff = min(2*b, p.backoffCap())
	} else {
		st.Backoff = 0
	}
	if pause > 0 {
		st.Pause = Pause{Until: it.Ended.Add(pause), Kind: kind}
	}
	return st, d
}

// setupMessage says what failed and what to do about it.
func setupMessage(agent string, f analyze.SetupFailure) string {
	if agent == "" {
		agent = "the agent"
	}
	what := map[string]string{
		analyze.SetupAuth:  "cannot authenticate; log in with its CLI or set its API key (`ralph doctor` shows which credentials it looks for)",
		analyze.SetupModel: "rejected the model; check the model setting (--model or the agent's *_MODEL key)",
		analyze.SetupUsage: "refused its command line; check the agent's *_ARGS and *_CMD settings and its version (`ralph doctor`)",
	}[f.Kind]
	if what == "" {
		what = "cannot work as set up"
	}
	return fmt.Sprintf("%s %s: %s", agent, what, f.Message)
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

// Record is the metrics line of an iteration folded into st with d.
func Record(it Iteration, d Decision, st State) Metrics {
	o := it.Observed
	ds, dropped := boundDecisions(slices.Clone(it.Decisions))
	return Metrics{
		Loop: it.Loop, StartedAt: it.Started, DurationMS: it.Ended.Sub(it.Started).Milliseconds(), ExitCode: it.ExitCode,
		TimedOut: it.TimedOut, InputTokens: d.Usage.InputTokens, OutputTokens: d.Usage.OutputTokens,
		CacheReadTokens: d.Usage.CacheReadInputTokens, CacheCreationTokens: d.Usage.CacheCreationInputTokens,
		CostUSD: d.Usage.CostUSD, FilesChanged: it.Files, LinesAdded: it.LinesAdded, LinesRemoved: it.LinesRemoved, Commit: it.Commit,
		Progress: d.Productive, Failed: d.Failed,
		Status: o.Status, ExitSignal: o.ExitSignal, CompletionIndicators: o.CompletionIndicators, ConfidenceScore: o.ConfidenceScore,
		TestOnly: o.IsTestOnly, Errors: len(o.Errors), Denials: len(o.PermissionDenials),
		UsageLimit: o.UsageLimit.Detected, Summary: o.Summary, Decision: d.Label(),
		Breaker: string(st.Breaker.Status), Agent: it.Agent, Model: it.Model, StatusBlock: maps.Clone(o.StatusBlock),
		Verified: st.Verify.Verified,
		PRReady:  o.PRReady, TestsStatus: testsStatus(o.TestsStatus), Windows: slices.Clone(o.Windows),
		Decisions: ds, DecisionsDropped: dropped,
	}
}
