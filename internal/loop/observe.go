package loop

import (
	"slices"

	"ralph/internal/analyze"
)

// Bounds on what an iteration carries of the analysis: enough for every
// decision (the breaker's error signature reads the lines), small enough
// for a workflow payload.
const (
	maxObservedLines = 100
	maxObservedLine  = 1000
)

// Observed is the part of an agent's analysis the decisions and the record
// use, as plain data that round-trips through JSON (analyze.Analysis keeps
// OutputBytes out of its JSON contract).
type Observed struct {
	Status                 string             `json:"status"`
	ExitSignal             bool               `json:"exit_signal,omitempty"`
	ExitSignalExplicit     bool               `json:"exit_signal_explicit,omitempty"`
	HasCompletionSignal    bool               `json:"has_completion_signal,omitempty"`
	ConfidenceScore        int                `json:"confidence_score,omitempty"` // explains, never decides
	CompletionIndicators   int                `json:"completion_indicators,omitempty"`
	TestsStatus            string             `json:"tests_status,omitempty"`
	IsTestOnly             bool               `json:"is_test_only,omitempty"`
	FilesModified          int                `json:"files_modified"`
	AskingQuestions        bool               `json:"asking_questions,omitempty"`
	ClarificationNeeded    bool               `json:"clarification_needed,omitempty"`
	ClarificationQuestions []string           `json:"clarification_questions,omitempty"`
	PRReady                bool               `json:"pr_ready,omitempty"`
	IsError                bool               `json:"is_error,omitempty"`
	Errors                 []string           `json:"errors,omitempty"`
	PermissionDenials      []analyze.Denial   `json:"permission_denials,omitempty"`
	UsageLimit             analyze.UsageLimit `json:"usage_limit,omitzero"`
	// Windows are the account's usage windows as the agent reported them.
	Windows        []analyze.Window     `json:"windows,omitempty"`
	SetupFailure   analyze.SetupFailure `json:"setup_failure,omitzero"`
	SessionID      string               `json:"session_id,omitempty"`
	Usage          analyze.Usage        `json:"usage,omitzero"`
	Summary        string               `json:"summary,omitempty"`
	Recommendation string               `json:"recommendation,omitempty"`
	OutputBytes    int64                `json:"output_bytes,omitempty"`
	StatusBlock    map[string]string    `json:"status_block,omitempty"` // the block's fields, for history views
}

// Observe keeps what the decisions need of an analysis; nil is an output
// nothing could be read from.
func Observe(a *analyze.Analysis) Observed {
	if a == nil {
		return Observed{Status: analyze.StatusUnknown, FilesModified: -1}
	}
	o := Observed{
		Status: a.Status, ExitSignal: a.ExitSignal, ExitSignalExplicit: a.ExitSignalExplicit,
		HasCompletionSignal: a.HasCompletionSignal, CompletionIndicators: a.CompletionIndicators, ConfidenceScore: a.ConfidenceScore,
		TestsStatus: a.TestsStatus, IsTestOnly: a.IsTestOnly, FilesModified: a.FilesModified,
		AskingQuestions: a.AskingQuestions, ClarificationNeeded: a.ClarificationNeeded,
		ClarificationQuestions: bound(a.ClarificationQuestions), PRReady: a.PRReady,
		IsError: a.IsError, Errors: bound(a.Errors), UsageLimit: a.UsageLimit, SetupFailure: a.SetupFailure, SessionID: a.SessionID,
		Usage: a.Usage, Summary: a.Summary, Recommendation: a.Recommendation, OutputBytes: a.OutputBytes,
		Windows: slices.Clone(a.Windows),
	}
	if len(a.PermissionDenials) > 0 {
		o.PermissionDenials = append([]analyze.Denial(nil), a.PermissionDenials[:min(len(a.PermissionDenials), maxObservedLines)]...)
	}
	if a.StatusBlock != nil && len(a.StatusBlock.Fields) > 0 {
		o.StatusBlock = make(map[string]string, len(a.StatusBlock.Fields))
		for k, v := range a.StatusBlock.Fields {
			o.StatusBlock[k] = v
		}
	}
	return o
}

func bound(lines []string) []string {
	if len(lines) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(lines), maxObservedLines))
	for _, l := range lines[:min(len(lines), maxObservedLines)] {
		if len(l) > maxObservedLine {
			l = cut(l, maxObservedLine)
		}
		out = append(out, l)
	}
	return out
}
