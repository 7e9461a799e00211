package monitor

import (
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"ralph/internal/agent"
	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/plan"
	"ralph/internal/ratelimit"
	"ralph/internal/store"
)

// t0 is the tests' "now"; UTC keeps clock times the same on every machine.
var t0 = time.Date(2025, 6, 1, 14, 3, 21, 0, time.UTC)

func fixedNow() time.Time { return t0 }

// newTestModel is a dashboard with no files behind it, fed by hand.
func newTestModel(w, h int) *Model {
	m := NewModel(Options{Title: "webshop", NoColor: true, Now: fixedNow})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// feedSnap hands the model a snapshot as a finished load would.
func feedSnap(m *Model, s Snapshot, live ...agent.LiveEvent) {
	m.loading = true
	m.Update(snapshotMsg{snap: s, live: live})
}

func runningSnap() Snapshot {
	th := breaker.DefaultThresholds()
	st := store.Status{
		Timestamp: t0.Add(-151 * time.Second), LoopCount: 12, Status: "running", LastAction: "executing",
		StartedAt: t0.Add(-62 * time.Minute), PID: 4242, Agent: "claude",
		CallsMadeThisHour: 40, MaxCallsPerHour: 100, TokensUsedThisHour: 1_234_000, MaxTokensPerHour: 5_000_000,
		Breaker: store.BreakerStatus{State: "CLOSED"},
		Totals:  store.Totals{InputTokens: 300_000, OutputTokens: 150_000, CostUSD: 4.27},
	}
	var recent []loop.Metrics
	for i := 1; i <= 12; i++ {
		m := loop.Metrics{
			Loop: i, StartedAt: t0.Add(time.Duration(i-13) * 5 * time.Minute), DurationMS: int64(150_000 + i*1000),
			InputTokens: int64(20_000 + i*100), OutputTokens: 9000, CostUSD: 0.31 + float64(i)/100,
			FilesChanged: i % 4, Progress: i%4 != 0, Status: "IN_PROGRESS", Decision: "continue",
		}
		if i == 7 {
			m.Failed, m.ExitCode, m.Status = true, 1, "UNKNOWN"
		}
		recent = append(recent, m)
	}
	var log []string
	for i := 1; i <= 40; i++ {
		log = append(log, fmt.Sprintf("2025-06-01T13:%02d:00Z [INFO] loop %d: iteration ended: continue (files changed: %d)", 10+i, i, i%4))
	}
	return Snapshot{
		At:   t0,
		Loop: LoopInfo{Known: true, Status: st},
		Breaker: BreakerInfo{Known: true, Thresholds: th, State: breaker.State{
			Status: breaker.Closed, NoProgress: 1, TotalOpens: 1, CurrentLoop: 12, LastProgressLoop: 11,
		}},
		Limits: LimitsInfo{Known: true, Limits: ratelimit.Limits{MaxCallsPerHour: 100, MaxTokensPerHour: 5_000_000},
			Calls: 40, Tokens: 1_234_000},
		Plan:         PlanInfo{Known: true, Counts: plan.Counts{Total: 12, Done: 7, OpenRequired: 3, OpenOptional: 2}},
		Recent:       recent,
		Log:          log,
		IterationLog: "/project/.ralph/logs/iteration_13_20250601T140050Z.stdout.log",
	}
}

func liveSample() []agent.LiveEvent {
	return []agent.LiveEvent{
		{Kind: agent.LiveText, Text: "I'll start with the failing checkout test, then fix the price rounding."},
		{Kind: agent.LiveTool, Tool: "Read", Target: "internal/cart/price.go"},
		{Kind: agent.LiveTool, Tool: "Bash", Target: "go test ./internal/cart/..."},
		{Kind: agent.LiveText, Text: "The test fails because totals are rounded per line instead of once at the end.\nI'll change Total to sum in cents and round once."},
		{Kind: agent.LiveTool, Tool: "Edit", Target: "internal/cart/price.go"},
		{Kind: agent.LiveTool, Tool: "Bash", Target: "go test ./..."},
		{Kind: agent.LiveError, Text: "permission denied: Bash npm install"},
	}
}

func waitingSnap() Snapshot {
	s := runningSnap()
	s.Loop.Status.Status, s.Loop.Status.LastAction = "waiting", "waiting: usage_limit"
	s.Loop.Status.LoopCount = 13
	s.Loop.Status.Timestamp = t0.Add(-20 * time.Minute)
	s.Loop.Status.Wait = &store.Wait{Kind: "usage_limit", Until: t0.Add(time.Hour + 2*time.Minute + 3*time.Second),
		Reason: "5-hour limit reached; resets 3:05pm"}
	s.IterationLog = ""
	s.Recent = append(s.Recent, loop.Metrics{Loop: 13, DurationMS: 61_000, InputTokens: 5000, OutputTokens: 800,
		CostUSD: 0.05, UsageLimit: true, Status: "UNKNOWN", Decision: "wait:usage_limit"})
	return s
}

func breakerOpenSnap() Snapshot {
	s := runningSnap()
	s.Loop.Status.Status, s.Loop.Status.LastAction, s.Loop.Status.ExitReason = "stopped", "circuit_breaker_open", "circuit_breaker_open"
	s.Loop.Status.Timestamp = t0.Add(-12 * time.Minute)
	s.Loop.Status.Breaker = store.BreakerStatus{State: "OPEN", Reason: "no progress in 3 consecutive loops"}
	s.Breaker.State = breaker.State{
		Status: breaker.Open, Reason: breaker.ReasonNoProgress, Message: "no progress in 3 consecutive loops",
		OpenedAt: t0.Add(-12 * time.Minute), LastChange: t0.Add(-12 * time.Minute), TotalOpens: 2, NoProgress: 3,
		CurrentLoop: 12, LastProgressLoop: 9,
		History: []breaker.Transition{
			{At: t0.Add(-3 * time.Hour), Loop: 4, From: breaker.Closed, To: breaker.Open, Reason: breaker.ReasonSameError, Message: "same error in 5 consecutive loops"},
			{At: t0.Add(-150 * time.Minute), Loop: 4, From: breaker.Open, To: breaker.HalfOpen, Message: "cooldown over; one trial iteration"},
			{At: t0.Add(-140 * time.Minute), Loop: 5, From: breaker.HalfOpen, To: breaker.Closed, Message: "progress in the trial iteration"},
			{At: t0.Add(-12 * time.Minute), Loop: 12, From: breaker.Closed, To: breaker.Open, Reason: breaker.ReasonNoProgress, Message: "no progress in 3 consecutive loops"},
		},
	}
	s.IterationLog = ""
	return s
}

func stoppedSnap() Snapshot {
	s := runningSnap()
	s.Loop.Status.Status, s.Loop.Status.LastAction, s.Loop.Status.ExitReason = "stopped", "project_complete", "project_complete"
	s.Loop.Status.Timestamp = t0.Add(-5 * time.Minute)
	s.Plan.Counts = plan.Counts{Total: 12, Done: 12}
	s.IterationLog = ""
	return s
}

func pausedSnap() Snapshot {
	s := runningSnap()
	s.Loop.Status.Status, s.Loop.Status.LastAction = "paused", "paused"
	s.Loop.Status.Timestamp = t0.Add(-3 * time.Minute)
	s.Loop.PauseRequested = true
	s.IterationLog = ""
	return s
}
