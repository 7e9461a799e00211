package monitor

import (
	"time"

	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/plan"
	"ralph/internal/ratelimit"
	"ralph/internal/store"
)

// Snapshot is what the dashboard shows, read from the state directory at
// one instant. It is plain data: tests build one by hand.
type Snapshot struct {
	At      time.Time
	Loop    LoopInfo
	Breaker BreakerInfo
	Limits  LimitsInfo
	Plan    PlanInfo
	// Recent are the last iterations from logs/metrics.jsonl, oldest first.
	Recent     []loop.Metrics
	RecentNote string
	// Log is the tail of logs/ralph.log, oldest line first.
	Log     []string
	LogNote string
	// IterationLog is the stdout log of the iteration that is running, ""
	// when none is.
	IterationLog string
}

// LoopInfo is status.json plus what the dashboard found out about it.
type LoopInfo struct {
	Known  bool   // a status.json was read
	Note   string // why it could not be, when it exists
	Status store.Status
	// Dead is set when the status says the loop is active but its process
	// is gone: it crashed or was killed before it could say so.
	Dead bool
	// PauseRequested and StopRequested are requests the loop has not
	// obeyed yet (Source.Requests).
	PauseRequested, StopRequested bool
}

// Statuses a finished loop leaves behind; the bash tool's are included so
// that its status files read the same.
var finishedStatuses = map[string]bool{
	"": true, "stopped": true, "halted": true, "completed": true, "complete": true,
	"error": true, "failed": true, "success": true,
}

// Active reports a loop that says it is running, waiting or paused and
// whose process, as far as can be told, is still there.
func (l LoopInfo) Active() bool {
	return l.Known && !finishedStatuses[l.Status.Status] && !l.Dead
}

// Running reports an agent call in progress.
func (l LoopInfo) Running() bool { return l.Active() && l.Status.Status == "running" }

// Paused reports a loop holding between iterations at a person's request.
func (l LoopInfo) Paused() bool { return l.Active() && l.Status.Status == "paused" }

// Iteration is the number of the iteration in progress: status.json counts
// finished iterations, and is rewritten when one starts.
func (l LoopInfo) Iteration() int { return l.Status.LoopCount + 1 }

// Number is the loop the dashboard names: the one in progress while an
// agent works (as "Iteration N" and the log's "loop N: calling the agent"
// do), else the last one finished.
func (l LoopInfo) Number() int {
	if l.Running() {
		return l.Iteration()
	}
	return l.Status.LoopCount
}

// BreakerInfo is the circuit breaker as .circuit_breaker_state describes it,
// or status.json's summary of it when that file is missing.
type BreakerInfo struct {
	Known bool
	Note  string
	State breaker.State
	// Summary is set when only status.json's state and reason are known.
	Summary    bool
	Thresholds breaker.Thresholds
}

// ResumeAt is when an open breaker's cooldown ends (zero if unknown).
func (b BreakerInfo) ResumeAt() time.Time { return b.State.ResumeAt(b.Thresholds) }

// LimitsInfo is the sliding-hour budget at the snapshot's instant.
type LimitsInfo struct {
	Known  bool
	Note   string
	Limits ratelimit.Limits
	Calls  int
	Tokens int64
	// NextFree is when the next call fits the budget; zero when one fits now.
	NextFree time.Time
}

// PlanInfo is fix_plan.md's progress.
type PlanInfo struct {
	Known  bool
	Note   string
	Counts plan.Counts
}
