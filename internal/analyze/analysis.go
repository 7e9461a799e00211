// Package analyze turns one agent output into an Analysis: what the agent
// said about its own work, what went wrong, and what it cost.
//
// It reads Claude Code json / stream-json, Codex `exec --json`, Gemini CLI
// json / stream-json, the older flat JSON schema and plain text, told apart
// by their content. Each agent's format is known to that agent's wire
// package alone (internal/agent/<name>/wire): the analyzer hands it each
// event by its type, and its Scanner hands back the facts the event holds
// (activity.Facts), which this package judges whatever agent gave them.
// Input is streamed line by line and the scanners skip tool outputs without
// holding them, so memory stays flat however long the transcript is.
//
// Status blocks, completion wording, questions and usage-limit messages are
// read only from the agent's own words (result text, assistant text), never
// from tool results, which echo files and command output.
//
// The package is pure: "now" and the agent's exit code come in as options.
package analyze

import "time"

// Formats of the input.
const (
	FormatJSON       = "json"
	FormatStreamJSON = "stream-json"
	FormatText       = "text"
)

// Status values.
const (
	StatusInProgress         = "IN_PROGRESS"
	StatusComplete           = "COMPLETE"
	StatusBlocked            = "BLOCKED"
	StatusNeedsClarification = "NEEDS_CLARIFICATION"
	StatusUnknown            = "UNKNOWN"
)

// Tests status values.
const (
	TestsPassing = "PASSING"
	TestsFailing = "FAILING"
	TestsNotRun  = "NOT_RUN"
	TestsUnknown = "UNKNOWN"
)

// Status block dialects.
const (
	DialectRalph   = "RALPH_STATUS"
	DialectClarity = "CLARITY_STATUS"
	DialectPromise = "PROMISE"
)

// Usage-limit kinds.
const (
	LimitFiveHour = "five_hour"
	LimitWeekly   = "weekly"
	LimitSession  = "session"
	LimitUnknown  = "unknown"
)

// Analysis is the contract printed by `ralph analyze --json` (DESIGN.md).
type Analysis struct {
	Format                 string       `json:"format"`
	StatusBlock            *StatusBlock `json:"status_block"`
	Status                 string       `json:"status"`
	ExitSignal             bool         `json:"exit_signal"`
	ExitSignalExplicit     bool         `json:"exit_signal_explicit"`
	WorkType               string       `json:"work_type"`
	FilesModified          int          `json:"files_modified"`
	TasksCompleted         int          `json:"tasks_completed"`
	TasksRemaining         int          `json:"tasks_remaining"`
	TestsStatus            string       `json:"tests_status"`
	IsTestOnly             bool         `json:"is_test_only"`
	CompletionIndicators   int          `json:"completion_indicators"`
	HasCompletionSignal    bool         `json:"has_completion_signal"`
	AskingQuestions        bool         `json:"asking_questions"`
	QuestionCount          int          `json:"question_count"`
	ClarificationNeeded    bool         `json:"clarification_needed"`
	ClarificationQuestions []string     `json:"clarification_questions"`
	PRReady                bool         `json:"pr_ready"`
	Errors                 []string     `json:"errors"`
	IsError                bool         `json:"is_error"`
	PermissionDenials      []Denial     `json:"permission_denials"`
	UsageLimit             UsageLimit   `json:"usage_limit"`
	SetupFailure           SetupFailure `json:"setup_failure"`
	SessionID              string       `json:"session_id"`
	Usage                  Usage        `json:"usage"`
	Summary                string       `json:"summary"`
	Recommendation         string       `json:"recommendation"`
	// ConfidenceScore (0–100) is how much of the reading rests on structure
	// rather than wording (confidenceScore). It explains a decision; it never
	// makes one.
	ConfidenceScore int      `json:"confidence_score"`
	Warnings        []string `json:"warnings"`

	// Not part of the JSON contract; the loop uses them.
	ExitCode    int   `json:"-"` // the agent's exit status, -1 when unknown
	OutputBytes int64 `json:"-"` // size of the input read
	// ToolCalls counts the tool invocations seen in a structured transcript.
	ToolCalls int `json:"-"`
	// Windows are the account's usage windows as the agent reported them
	// during the call (Claude Code's rate-limit events).
	Windows []Window `json:"-"`
}

// Window is what an agent reported of one of its account's usage windows.
type Window struct {
	// Kind is the window in the agent's words: "five_hour", "seven_day".
	Kind string `json:"kind"`
	// Used is the fraction of it used, 0–1; negative: not said.
	Used float64 `json:"used"`
	// ResetsAt is when it resets (zero: not said).
	ResetsAt time.Time `json:"resets_at,omitzero"`
}

// maxWindows bounds the windows kept of one call: an agent has a few.
const maxWindows = 8

// StatusBlock is the last complete status block found in the agent's words.
type StatusBlock struct {
	Dialect string            `json:"dialect"`
	Fields  map[string]string `json:"fields"`
}

// Denial is one tool call the agent was refused.
type Denial struct {
	Tool    string `json:"tool"`
	Command string `json:"command"`
}

// UsageLimit describes a provider usage limit the agent ran into.
type UsageLimit struct {
	Detected bool   `json:"detected"`
	Kind     string `json:"kind"`
	ResetsAt string `json:"resets_at"` // RFC3339, "" when unknown
	Message  string `json:"message"`
}

// ResetTime parses ResetsAt; ok is false when no reset time is known.
func (u UsageLimit) ResetTime() (time.Time, bool) {
	if u.ResetsAt == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, u.ResetsAt)
	return t, err == nil
}

// Usage is the token usage and cost reported by the agent.
type Usage struct {
	InputTokens              int64   `json:"input_tokens"`
	OutputTokens             int64   `json:"output_tokens"`
	CacheReadInputTokens     int64   `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64   `json:"cache_creation_input_tokens"`
	CostUSD                  float64 `json:"cost_usd"`
}

// Total is every token the call consumed.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

func (u *Usage) add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadInputTokens += o.CacheReadInputTokens
	u.CacheCreationInputTokens += o.CacheCreationInputTokens
	u.CostUSD += o.CostUSD
}

// Options are the facts about the call that are not in its output.
type Options struct {
	// ExitCode is the agent's exit status; -1 when unknown.
	ExitCode int
	// AllowedTools is the agent's tool allow-list (Claude syntax), used to
	// tell a real denial from a compound command Claude refused.
	AllowedTools []string
	// Now anchors reset times such as "resets 9pm".
	Now time.Time
	// Stderr, when set, is the agent's standard error: read for usage limits
	// and errors only (some CLIs print their limit message there).
	Stderr []byte
}
