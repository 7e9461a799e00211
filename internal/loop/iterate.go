package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"ralph/internal/agent"
	"ralph/internal/analyze"
	"ralph/internal/gitx"
	"ralph/internal/plan"
	"ralph/internal/store"
)

// iterate runs one agent call and folds its result into the state.
func (e *Engine) iterate(ctx context.Context, before plan.Plan) (Outcome, error) {
	n := e.st.Loop + 1
	start := e.deps.Now()
	st := e.deps.Store
	dir := st.ProjectDir()
	if e.set.Backup {
		label := fmt.Sprintf("loop-%d-%s", n, start.UTC().Format("20060102T150405Z"))
		if ref, err := e.deps.Backup(ctx, dir, label); err != nil {
			e.emit(Event{Type: EventWarning, Loop: n, Message: "backup failed: " + err.Error()})
		} else {
			e.emit(Event{Type: EventBackup, Loop: n, Message: ref})
		}
	}
	snap, err := e.deps.Snapshot(ctx, dir)
	if err != nil {
		e.emit(Event{Type: EventWarning, Loop: n, Message: "git snapshot failed, progress falls back to the agent's report: " + err.Error()})
		snap = gitx.Snap{}
	}
	prompt, err := os.ReadFile(st.PromptFile())
	if err != nil {
		return Outcome{}, fmt.Errorf("read prompt: %w", err)
	}
	stdoutPath, stderrPath := st.IterationLogs(n, start)
	session := ""
	if e.set.Continuity && e.deps.Sessions != nil {
		session = e.deps.Sessions.Current(start)
	}
	sp := stopPlan(before)
	spec := e.current()
	inv := agent.Invocation{
		Dir: dir, Prompt: string(prompt), SessionID: session,
		AppendSystemPrompt: BuildContext(ContextInput{
			Loop: n, PlanKnown: sp.Known, PlanOpen: sp.Open, PlanTotal: sp.Total, NextTask: sp.NextOpen,
			Breaker: e.st.Breaker.Status, BreakerNote: e.st.Breaker.Message,
			LastSummary: e.st.LastSummary, Corrections: e.st.Corrections,
		}),
		Model: spec.Model, Effort: spec.Effort, AllowedTools: spec.AllowedTools,
		OutputFormat: e.set.OutputFormat, Live: e.set.Live, Timeout: e.set.Timeout, Env: e.set.Env,
		StdoutPath: stdoutPath, StderrPath: stderrPath, OnEvent: e.set.OnLive,
	}
	e.writeStatusAction("running", "executing", session)
	e.emit(Event{Type: EventIterationStart, Loop: n, Session: session, Agent: e.agentName()})

	res, runErr := spec.Adapter.Run(ctx, inv)
	if runErr != nil {
		var se *agent.StartError
		if errors.As(runErr, &se) && errors.Is(se.Err, exec.ErrNotFound) || res.StartErr == nil {
			return Outcome{}, runErr // a configuration problem: no point in looping
		}
	}
	if res.Interrupted || ctx.Err() != nil {
		return Outcome{}, nil
	}
	end := e.deps.Now()
	prog := gitx.Progress{}
	if snap.InRepo {
		after, err := e.deps.SnapshotAfter(ctx, dir, snap)
		if err != nil {
			e.emit(Event{Type: EventWarning, Loop: n, Message: "git snapshot failed: " + err.Error()})
		} else {
			prog = gitx.Compare(snap, after)
		}
	}
	afterPlan, _ := e.readPlan()
	change := plan.Diff(before, afterPlan)
	a := res.Analysis
	if a == nil {
		a = &analyze.Analysis{Status: analyze.StatusUnknown, FilesModified: -1, TasksRemaining: -1, TasksCompleted: -1}
	}
	for _, w := range res.Warnings {
		e.emit(Event{Type: EventWarning, Loop: n, Message: w})
	}
	caps := spec.Adapter.Capabilities()
	it := Iteration{
		Loop: n, Ended: end, Analysis: a, ExitCode: res.ExitCode, TimedOut: res.TimedOut, StartErr: res.StartErr,
		InRepo: snap.InRepo, Changed: prog.Changed, Files: len(prog.FilesChanged),
		PlanGain: change.Checked + change.AddedDone, Plan: stopPlan(afterPlan),
		CumulativeCost: caps.CumulativeCost, CumulativeTokens: caps.CumulativeTokens,
	}
	var out Outcome
	e.st, out = Fold(e.st, it, e.set.Policy)
	e.afterSession(a, out, n, end)
	if out.Reason == "needs_clarification" {
		e.writeClarification(a)
	}
	if err := e.saveState(); err != nil {
		return out, err
	}
	e.record(it, res, start, out)
	if _, err := store.PruneIterationLogs(st.LogsDir(), e.set.KeepIterationLogs); err != nil {
		e.emit(Event{Type: EventWarning, Loop: n, Message: "log retention: " + err.Error()})
	}
	e.lastAnalysis = a
	return out, nil
}

func (e *Engine) afterSession(a *analyze.Analysis, out Outcome, loop int, now time.Time) {
	if e.deps.Sessions == nil || !e.set.Continuity {
		return
	}
	var err error
	switch {
	case out.ResetSession != "":
		err = e.deps.Sessions.Reset(out.ResetSession, loop, now)
	case a.SessionID != "":
		err = e.deps.Sessions.Save(a.SessionID, now)
	}
	if err != nil {
		e.emit(Event{Type: EventWarning, Loop: loop, Message: "session: " + err.Error()})
	}
}

func (e *Engine) writeClarification(a *analyze.Analysis) {
	var b strings.Builder
	b.WriteString("# Clarification needed\n\nThe agent stopped to ask (loop ")
	fmt.Fprintf(&b, "%d, %s):\n\n", e.st.Loop, e.deps.Now().UTC().Format(time.RFC3339))
	for _, q := range a.ClarificationQuestions {
		fmt.Fprintf(&b, "- %s\n", store.Redact(q))
	}
	if a.Recommendation != "" {
		fmt.Fprintf(&b, "\nIts recommendation: %s\n", store.Redact(a.Recommendation))
	}
	b.WriteString("\nAnswer in specs/ or fix_plan.md, then run `ralph run` again (or use --no-clarify).\n")
	if err := store.WriteFileAtomic(e.deps.Store.ClarificationFile(), []byte(b.String()), 0o644); err != nil {
		e.emit(Event{Type: EventWarning, Message: "write clarification.md: " + err.Error()})
	}
}

// record writes the iteration's metrics line and emits its event.
func (e *Engine) record(it Iteration, res agent.Result, start time.Time, out Outcome) {
	a := it.Analysis
	decision := "continue"
	switch out.Action {
	case Stop:
		decision = "stop:" + out.Reason
	case Wait:
		decision = "wait:usage_limit"
	}
	m := Metrics{
		Loop: it.Loop, StartedAt: start.UTC(), DurationMS: it.Ended.Sub(start).Milliseconds(), ExitCode: res.ExitCode,
		TimedOut: res.TimedOut, InputTokens: out.Usage.InputTokens, OutputTokens: out.Usage.OutputTokens,
		CacheReadTokens: out.Usage.CacheReadInputTokens, CacheCreationTokens: out.Usage.CacheCreationInputTokens,
		CostUSD: out.Usage.CostUSD, FilesChanged: it.Files, Progress: out.Productive, Failed: out.Failed,
		Status: a.Status, ExitSignal: a.ExitSignal, CompletionIndicators: a.CompletionIndicators,
		TestOnly: a.IsTestOnly, Errors: len(a.Errors), Denials: len(a.PermissionDenials),
		UsageLimit: a.UsageLimit.Detected, Summary: store.Redact(a.Summary), Decision: decision,
		Breaker: string(e.st.Breaker.Status), Agent: e.agentName(),
	}
	if err := store.AppendMetrics(e.deps.Store.MetricsFile(), m); err != nil {
		e.emit(Event{Type: EventWarning, Loop: it.Loop, Message: "metrics: " + err.Error()})
	}
	e.emit(Event{Type: EventIterationEnd, Loop: it.Loop, Iteration: &m, Message: out.Message})
}
