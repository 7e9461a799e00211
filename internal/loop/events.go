package loop

import (
	"time"

	"ralph/internal/activity"
	"ralph/internal/analyze"
	"ralph/internal/reason"
)

// Event types: one event type flows from the engine to every observer
// (log, terminal, JSON lines, the monitor, and in the daemon the API, chat
// and web). Live events may be dropped when an observer falls behind; no
// other kind is.
const (
	EventLive           = "live"
	EventStart          = "start"
	EventIterationStart = "iteration_start"
	EventIterationEnd   = "iteration_end"
	EventWait           = "wait"
	EventBackup         = "backup"
	EventWarning        = "warning"
	EventStop           = "stop"
	EventError          = "error" // the run ended on an error, not a decision (exit 1)
	EventPaused         = "paused"
	EventResumed        = "resumed"
	EventAgentSwitch    = "agent_switch"
	// EventVerify: the verify command ran on a claimed completion.
	EventVerify = "verify"
)

// Event is one thing that happened in the loop.
type Event struct {
	Type      string        `json:"type"`
	At        time.Time     `json:"at"`
	Loop      int           `json:"loop"`
	Message   string        `json:"message,omitempty"`
	Session   string        `json:"session_id,omitempty"`
	Agent     string        `json:"agent,omitempty"`
	WaitKind  string        `json:"wait_kind,omitempty"`
	Until     time.Time     `json:"until,omitzero"`
	Reason    reason.Reason `json:"exit_reason,omitempty"`
	ExitCode  int           `json:"exit_code,omitempty"`
	Iteration *Metrics      `json:"iteration,omitempty"`
	// Verify is the verify command's run (EventVerify).
	Verify *VerifyRun `json:"verify,omitempty"`
	// Live is a piece of the running agent's output (EventLive).
	Live *activity.Event `json:"live,omitempty"`
}

// Droppable reports whether an observer that falls behind may miss the
// event: only the agent's live output, which the iteration's record sums up.
func (e Event) Droppable() bool { return e.Type == EventLive }

// Metrics is one line of logs/metrics.jsonl: what one iteration did and cost.
type Metrics struct {
	Loop                int       `json:"loop"`
	StartedAt           time.Time `json:"started_at"`
	DurationMS          int64     `json:"duration_ms"`
	ExitCode            int       `json:"exit_code"`
	TimedOut            bool      `json:"timed_out,omitempty"`
	InputTokens         int64     `json:"input_tokens"`
	OutputTokens        int64     `json:"output_tokens"`
	CacheReadTokens     int64     `json:"cache_read_input_tokens"`
	CacheCreationTokens int64     `json:"cache_creation_input_tokens"`
	CostUSD             float64   `json:"cost_usd"`
	FilesChanged        int       `json:"files_changed"`
	// LinesAdded and LinesRemoved are what the changed files differ by;
	// Commit is the HEAD a commit during the call left.
	LinesAdded           int    `json:"lines_added,omitempty"`
	LinesRemoved         int    `json:"lines_removed,omitempty"`
	Commit               string `json:"commit,omitempty"`
	Progress             bool   `json:"progress"`
	Failed               bool   `json:"failed"`
	Status               string `json:"status"`
	ExitSignal           bool   `json:"exit_signal"`
	CompletionIndicators int    `json:"completion_indicators"`
	ConfidenceScore      int    `json:"confidence_score"` // of the analysis: explains, never decides
	TestOnly             bool   `json:"test_only"`
	Errors               int    `json:"errors"`
	Denials              int    `json:"permission_denials"`
	UsageLimit           bool   `json:"usage_limit"`
	Summary              string `json:"summary,omitempty"`
	Decision             string `json:"decision"`
	Breaker              string `json:"circuit_breaker"`
	Agent                string `json:"agent,omitempty"`
	// Model is the model the call asked for ("": the agent's default).
	Model string `json:"model,omitempty"`
	// StatusBlock is the fields of the agent's status block (RALPH_STATUS
	// and the like): the fleet's task file and history show them.
	StatusBlock map[string]string `json:"status_block,omitempty"`
	// Verify is the verify command's run when the iteration claimed
	// completion under the gate; Verified says the claim passed it.
	// Windows are the usage windows of the call's account as the agent
	// reported them (how much is used, when each resets): the fleet keeps
	// them per account.
	Windows  []analyze.Window `json:"usage_windows,omitempty"`
	Verify   *VerifyRun       `json:"verify,omitempty"`
	Verified bool             `json:"verified,omitempty"`
	// PRReady and TestsStatus are the analysis's reading of the block, so
	// that what decides on a record (a request's pull request) never reads
	// the block's strings again. Records from before them have no
	// TestsStatus: Typed reads them.
	PRReady     bool   `json:"pr_ready,omitempty"`
	TestsStatus string `json:"tests_status,omitempty"`
	// Decisions are who allowed or denied which tool call inside the call
	// (at most MaxGateDecisions; DecisionsDropped counts the rest).
	Decisions        []GateDecision `json:"decisions,omitempty"`
	DecisionsDropped int            `json:"decisions_dropped,omitempty"`
	// Replay is what `ralph replay` needs to make the iteration's
	// decisions again (nil in records from before it was kept). Views and
	// events leave it out: Lean.
	Replay *Replay `json:"replay,omitempty"`
}

// Lean is m without its replay inputs, for events and views.
func (m Metrics) Lean() Metrics {
	m.Replay = nil
	return m
}

// Typed is m with PRReady and TestsStatus as the analyzer would have read
// them, for a record kept before they were (an older metrics.jsonl line or
// store row): decisions then read old and new records alike.
func (m Metrics) Typed() Metrics {
	if m.TestsStatus != "" {
		return m
	}
	m.TestsStatus = analyze.TestsValue(m.StatusBlock["TESTS_STATUS"])
	m.PRReady, _ = analyze.BoolOf(m.StatusBlock["PR_READY"])
	return m
}

// testsStatus is what a record keeps of an analysis's tests status: never
// "", which marks a record from before it was kept.
func testsStatus(s string) string {
	if s == "" {
		return analyze.TestsUnknown
	}
	return s
}
