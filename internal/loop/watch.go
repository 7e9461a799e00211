package loop

import (
	"time"

	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/reason"
)

// WatchAgent is the agent named in the records the watchdog makes.
const WatchAgent = "watchdog"

// Watched is one status block the daemon's watchdog took from the screen
// of an interactive agent (a task left to a person, not to a loop), with
// what the host measured around it: the counterpart of Iteration for a
// call nobody made.
type Watched struct {
	// Since is when the previous record was made (or the watch began), At
	// when this block was taken.
	Since, At time.Time
	Observed  Observed
	// InRepo: progress was measured by git; Changed: the repository
	// changed since Since; Files how many files.
	InRepo  bool
	Changed bool
	Files   int
	// PlanGain counts the checklist items ticked since the last block.
	PlanGain int
	// Done is the watchdog's verdict that the task is finished ("": not).
	Done reason.Reason
}

// FoldWatch folds a watched block into the state as Fold folds a call:
// the loop count goes up, the breaker counts it with the same notion of
// progress, and the record is the one a loop's iteration would leave. It
// is pure; the host gathers the observation and acts on the breaker's
// decision (a halt ends the task).
func FoldWatch(st State, w Watched, th breaker.Thresholds) (State, Metrics, breaker.Decision) {
	st = st.clone()
	if st.Version == 0 {
		st.Version = StateVersion
	}
	if st.Breaker.Status == "" {
		st.Breaker = breaker.New(w.At)
	}
	st.Loop++
	o := w.Observed
	files := w.Files
	if !w.InRepo {
		files = max(o.FilesModified, 0)
	}
	// Progress as the loop counts it: the repository changed, the
	// checklist gained, or the agent says the work is complete.
	progress := w.Changed || w.PlanGain > 0 || o.Status == analyze.StatusComplete || (!w.InRepo && o.FilesModified > 0)
	var bd breaker.Decision
	st.Breaker, bd = st.Breaker.Step(breaker.Observation{At: w.At, Loop: st.Loop, Progress: progress,
		OnlyQuestions: o.AskingQuestions && !progress, Errors: o.Errors,
		Blocked: o.Status == analyze.StatusBlocked, BlockedReason: o.Recommendation}, th)
	decision := "continue"
	switch {
	case bd.Halt():
		decision = "stop:" + string(bd.Reason.ExitReason())
	case w.Done != "":
		decision = "stop:" + string(w.Done)
	}
	rec := Metrics{Loop: st.Loop, StartedAt: w.Since, DurationMS: w.At.Sub(w.Since).Milliseconds(), FilesChanged: files,
		Progress: progress, Status: o.Status, ExitSignal: o.ExitSignal, CompletionIndicators: o.CompletionIndicators,
		ConfidenceScore: o.ConfidenceScore, TestOnly: o.IsTestOnly, Errors: len(o.Errors), Summary: o.Summary,
		Decision: decision, Breaker: string(st.Breaker.Status), Agent: WatchAgent, StatusBlock: o.StatusBlock,
		PRReady: o.PRReady, TestsStatus: testsStatus(o.TestsStatus)}
	return st, rec, bd
}
