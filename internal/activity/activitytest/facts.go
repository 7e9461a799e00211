// Package activitytest records the facts a wire Scanner hands on, one line
// per fact, so each wire package can test its own reading of its format.
package activitytest

import (
	"fmt"
	"strings"
	"time"

	"ralph/internal/activity"
)

// Facts is an activity.Facts that writes down every fact it is given.
type Facts struct {
	Lines []string
}

var _ activity.Facts = (*Facts)(nil)

// String is the facts so far, one per line.
func (f *Facts) String() string { return strings.Join(f.Lines, "\n") }

func (f *Facts) add(format string, args ...any) {
	f.Lines = append(f.Lines, fmt.Sprintf(format, args...))
}

// Session implements activity.Facts.
func (f *Facts) Session(id []byte) { f.add("session %s", id) }

// SessionHint implements activity.Facts.
func (f *Facts) SessionHint(id []byte) { f.add("session hint %s", id) }

// Text implements activity.Facts.
func (f *Facts) Text(msgID, text string) { f.add("text %s %q", msgID, text) }

// TextDelta implements activity.Facts.
func (f *Facts) TextDelta(text string) { f.add("delta %q", text) }

// Answer implements activity.Facts.
func (f *Facts) Answer(text string) { f.add("answer %q", text) }

// Tool implements activity.Facts.
func (f *Facts) Tool(name, command, path string) {
	f.add("tool %s command=%q path=%q", name, command, path)
}

// ToolFailed implements activity.Facts.
func (f *Facts) ToolFailed(output string) { f.add("tool failed %q", output) }

// ToolTotals implements activity.Facts.
func (f *Facts) ToolTotals(calls, writes int) {
	f.add("tool totals %d calls, %d writes", calls, writes)
}

// Result implements activity.Facts.
func (f *Facts) Result(failed, succeeded bool) {
	f.add("result failed=%v succeeded=%v", failed, succeeded)
}

// ResultText implements activity.Facts.
func (f *Facts) ResultText(text string, failed bool) { f.add("result text %q failed=%v", text, failed) }

// Failed implements activity.Facts.
func (f *Facts) Failed() { f.add("failed") }

// Usage implements activity.Facts.
func (f *Facts) Usage(u activity.Usage, tokens bool) { f.add("usage %s tokens=%v", usage(u), tokens) }

// MessageUsage implements activity.Facts.
func (f *Facts) MessageUsage(msgID string, u activity.Usage) {
	f.add("message usage %s %s", msgID, usage(u))
}

func usage(u activity.Usage) string {
	return fmt.Sprintf("in=%d out=%d cache_read=%d cache_write=%d cost=%g",
		u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.CostUSD)
}

// Error implements activity.Facts.
func (f *Facts) Error(msg string) { f.add("error %q", msg) }

// ErrorNote implements activity.Facts.
func (f *Facts) ErrorNote(msg string) { f.add("error note %q", msg) }

// Denied implements activity.Facts.
func (f *Facts) Denied(tool, command string) { f.add("denied %s %q", tool, command) }

// Question implements activity.Facts.
func (f *Facts) Question(tool, text string, options []string) {
	f.add("question %s %q %q", tool, text, options)
}

// LimitReached implements activity.Facts.
func (f *Facts) LimitReached() { f.add("limit reached") }

// Limit429 implements activity.Facts.
func (f *Facts) Limit429() { f.add("limit 429") }

// LimitRejected implements activity.Facts.
func (f *Facts) LimitRejected(resetsAt time.Time, kind string) {
	at := "unknown"
	if !resetsAt.IsZero() {
		at = resetsAt.Format(time.RFC3339)
	}
	f.add("limit rejected resets=%s kind=%s", at, kind)
}

// WindowUsed implements activity.Facts.
func (f *Facts) WindowUsed(kind string, used float64, resetsAt time.Time) {
	at := "unknown"
	if !resetsAt.IsZero() {
		at = resetsAt.Format(time.RFC3339)
	}
	f.add("window %s used=%g resets=%s", kind, used, at)
}

// QuotaError implements activity.Facts.
func (f *Facts) QuotaError(msg, detail string) { f.add("quota error %q", msg) }
