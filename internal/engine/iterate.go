package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"ralph/internal/agent"
	"ralph/internal/gitx"
	"ralph/internal/loop"
	"ralph/internal/plan"
	"ralph/internal/reason"
	"ralph/internal/scarce"
	"ralph/internal/store"
)

// iterate runs one agent call, measures it and folds it into the state.
func (e *Engine) iterate(ctx context.Context, idx int, before plan.Plan) (loop.Decision, error) {
	it, ok, err := e.measure(ctx, idx, before)
	if err != nil || !ok {
		return loop.Decision{}, err
	}
	return e.fold(ctx, it)
}

// measure runs one agent call and measures it at the edge, deciding
// nothing; ok is false when the call was interrupted (nothing to fold).
func (e *Engine) measure(ctx context.Context, idx int, before plan.Plan) (it loop.Iteration, ok bool, err error) {
	n := e.st.Loop + 1
	start := e.now()
	st := e.deps.Store
	dir := st.ProjectDir()
	if e.spec.Backup {
		label := fmt.Sprintf("loop-%d-%s", n, start.Format("20060102T150405Z"))
		if ref, err := e.deps.Backup(ctx, dir, label); tampered(err) {
			return it, false, err
		} else if err != nil {
			e.emit(loop.Event{Type: loop.EventWarning, Loop: n, Message: "backup failed: " + err.Error()})
		} else {
			e.emit(loop.Event{Type: loop.EventBackup, Loop: n, Message: ref})
		}
	}
	// The last call's after-snapshot is this one's before: nothing but
	// ralph's own state (which snapshots leave out) changed since, and a
	// git status per iteration is saved.
	var snap gitx.Snap
	if e.nextBefore != nil {
		snap, err = *e.nextBefore, nil
	} else {
		snap, err = e.deps.Snapshot(ctx, dir)
	}
	e.nextBefore = nil
	if tampered(err) || scarce.Of(err) != "" {
		// A changed control file ends the loop; a shortage is waited out
		// first, or the call's progress would be misread.
		return it, false, err
	}
	if err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Loop: n, Message: "git snapshot failed, progress falls back to the agent's report: " + err.Error()})
		snap = gitx.Snap{}
	}
	prompt, err := store.ReadIn(dir, st.PromptFile(), store.MaxPromptSize)
	if err != nil {
		return it, false, fmt.Errorf("read prompt: %w", err)
	}
	// A person's answer to the last call's question goes to this call,
	// whichever host it runs on (the state carries it).
	prompt = append(prompt, loop.AnswerSection(e.st.Ask)...)
	stdoutPath, stderrPath := st.IterationLogs(n, start)
	session := loop.Resume(e.st, e.spec.Policy)
	sp := stopPlan(before)
	spec := e.spec.Agents[idx]
	ad := e.deps.Agents[idx]
	var accountEnv []string
	if e.deps.AccountEnv != nil {
		var switched string
		if accountEnv, switched = e.deps.AccountEnv(spec.Name); switched != "" && session != "" {
			e.emit(loop.Event{Type: loop.EventWarning, Loop: n, Message: switched + "; a new agent session, as the last one is kept in the other account"})
			session = ""
		}
	}
	inv := agent.Invocation{
		Dir: dir, Prompt: string(prompt), SessionID: session,
		AppendSystemPrompt: loop.BuildContext(loop.ContextInput{
			Loop: n, PlanKnown: sp.Known, PlanOpen: sp.Open, PlanTotal: sp.Total, NextTask: sp.NextOpen,
			Breaker: e.st.Breaker.Status, BreakerNote: e.st.Breaker.Message,
			LastSummary: e.st.Last.Summary, Corrections: e.st.Corrections,
		}),
		Model: spec.Model, Effort: spec.Effort, AllowedTools: spec.AllowedTools,
		OutputFormat: e.spec.OutputFormat, Live: e.spec.Live, Timeout: e.spec.Timeout, Env: e.spec.Env,
		Share:      outside(dir, st.FixPlanFile()),
		StdoutPath: stdoutPath, StderrPath: stderrPath, OnStart: e.deps.AgentStarted,
		MaxBudgetUSD: e.callCap,
	}
	if e.deps.Gate != nil {
		inv.Gate = e.deps.Gate
	}
	if e.spec.Live {
		inv.OnEvent = func(le agent.LiveEvent) {
			e.deps.Emit(loop.Event{Type: loop.EventLive, At: e.deps.Now(), Loop: n, Live: &le})
		}
	}
	// Also where no git ran since the last call (its snapshot failed).
	if err := e.guard.Check(); err != nil {
		return it, false, err
	}
	e.status("running", "executing", "", nil, session)
	e.emit(loop.Event{Type: loop.EventIterationStart, Loop: n, Session: session, Agent: spec.Name})
	if e.deps.CallEnv != nil {
		inv.Env = append(slices.Clip(inv.Env), e.deps.CallEnv()...)
	}
	if accountEnv != nil {
		inv.Env = append(slices.Clip(inv.Env), accountEnv...)
	}

	if e.deps.Decisions != nil {
		e.deps.Decisions() // an interrupted call's are not this one's
	}
	e.give() // the call is the agent's work, and a person's
	res, runErr := ad.Run(ctx, inv)
	if err := e.take(ctx); err != nil {
		return it, false, nil
	}
	if scarce.Of(runErr) != "" {
		return it, false, runErr // not the agent's doing: Run waits and calls again
	}
	if scarce.Of(res.OutputErr) != "" && !res.Interrupted && ctx.Err() == nil {
		// What the agent said is not all in its log: read, it would count
		// as a failed call. The work it did stays in the tree for the next.
		if e.short == 0 { // once per wait, not at every retry
			e.emit(loop.Event{Type: loop.EventWarning, Loop: n, Message: "the agent's output could not be logged in full; the call is not counted and is made again"})
		}
		return it, false, fmt.Errorf("agent output log: %w", res.OutputErr)
	}
	if runErr != nil {
		if cannotStart(runErr) || res.StartErr == nil {
			return it, false, runErr // a configuration problem: no point in looping
		}
	}
	if res.Interrupted || ctx.Err() != nil {
		return it, false, nil
	}
	end := e.now()
	prog := gitx.Progress{}
	if snap.InRepo {
		var after gitx.Snap
		err := e.retry(ctx, "measuring the call's changes", func() (err error) {
			after, err = e.deps.SnapshotAfter(ctx, dir, snap)
			return err
		})
		if tampered(err) {
			// Terminal, not a failed call for the breaker to count: the
			// loop stops here, saying which file changed.
			return it, false, err
		}
		if err != nil {
			e.emit(loop.Event{Type: loop.EventWarning, Loop: n, Message: "git snapshot failed: " + err.Error()})
		} else {
			prog = gitx.Compare(snap, after)
			after.Since = nil // as a before-snapshot it is a plain one
			e.nextBefore = &after
		}
	}
	afterPlan, _ := e.readPlan()
	change := plan.Diff(before, afterPlan)
	for _, w := range res.Warnings {
		e.emit(loop.Event{Type: loop.EventWarning, Loop: n, Message: w})
	}
	caps := ad.Capabilities()
	it = loop.Iteration{
		Loop: n, Agent: spec.Name, Model: spec.Model, Started: start, Ended: end, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		InRepo: snap.InRepo, Changed: prog.Changed, Files: len(prog.FilesChanged),
		LinesAdded: prog.LinesAdded, LinesRemoved: prog.LinesRemoved, Commit: prog.Head,
		PlanGain: change.Checked + change.AddedDone, Plan: stopPlan(afterPlan),
		Observed:       loop.Observe(res.Analysis),
		CumulativeCost: caps.CumulativeCost, CumulativeTokens: caps.CumulativeTokens,
	}
	if e.deps.Decisions != nil {
		it.Decisions = e.deps.Decisions()
	}
	if res.StartErr != nil {
		it.StartErr = res.StartErr.Error()
	}
	return it, true, nil
}

// fold folds a measured iteration into the state and records it. The
// record is saved whatever it takes: the state in memory already counts
// the iteration, so a save given up would lose it or, redone from the last
// saved state, count the call twice.
func (e *Engine) fold(ctx context.Context, it loop.Iteration) (loop.Decision, error) {
	n, end, st := it.Loop, it.Ended, e.deps.Store
	var d loop.Decision
	before := e.st.Session
	e.st, d = loop.Fold(e.st, it, e.spec.Policy)
	e.trace(loop.Trace{Fold: &loop.TraceFold{Iteration: it, Decision: d}})
	e.afterSession(it.Observed.SessionID, before, d, n, end)
	if d.Reason == reason.NeedsClarification {
		e.writeClarification(it.Observed)
	}
	rec := loop.Record(it, d, e.st)
	if r := e.called; r != nil {
		r.Iteration, r.Fold = it, d.Label()
		rec.Replay, e.called = r, nil
	}
	if d.Kind == loop.Check {
		// The claim is checked before the iteration is recorded, so its
		// record says whether it stood.
		var err error
		if d, err = e.checkClaim(ctx, d, &rec); err != nil || ctx.Err() != nil {
			return d, err
		}
	}
	if err := e.retry(ctx, "saving the state", func() error { return e.save(&rec) }); err != nil {
		return d, err
	}
	if _, err := st.PruneIterationLogs(e.spec.KeepIterationLogs); err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Loop: n, Message: "log retention: " + err.Error()})
	}
	rec = rec.Lean()
	rec.Summary = store.Redact(rec.Summary)
	e.emit(loop.Event{Type: loop.EventIterationEnd, Loop: n, Iteration: &rec, Message: d.Message})
	return d, nil
}

// cannotStart reports a start error that no retry can fix: the executable
// is not found, not there, or not executable. (A fork that fails for want
// of resources may work next time; the breaker counts those.)
func cannotStart(err error) bool {
	var se *agent.StartError
	if !errors.As(err, &se) {
		return false
	}
	return errors.Is(se.Err, exec.ErrNotFound) || errors.Is(se.Err, fs.ErrNotExist) || errors.Is(se.Err, fs.ErrPermission)
}

// afterSession tells the listener what Fold did to the session, and warns
// of an id the core dropped.
func (e *Engine) afterSession(id string, before loop.AgentSession, d loop.Decision, n int, now time.Time) {
	if e.spec.Policy.NoContinuity {
		return
	}
	if err := loop.ValidSessionID(id); id != "" && err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Loop: n, Message: fmt.Sprintf("session: the agent reported session id %.80q, which was dropped: %v", id, err)})
	}
	switch {
	case d.ResetSession != "":
		e.sessionChanged(SessionChange{From: before, Why: d.ResetSession, Loop: n, At: now})
	case e.st.Session != before:
		e.sessionChanged(SessionChange{From: before, To: e.st.Session, Loop: n, At: now})
	}
}

func (e *Engine) writeClarification(o loop.Observed) {
	var b strings.Builder
	b.WriteString("# Clarification needed\n\nThe agent stopped to ask (loop ")
	fmt.Fprintf(&b, "%d, %s):\n\n", e.st.Loop, e.now().Format(time.RFC3339))
	for _, q := range o.ClarificationQuestions {
		fmt.Fprintf(&b, "- %s\n", store.Redact(q))
	}
	if o.Recommendation != "" {
		fmt.Fprintf(&b, "\nIts recommendation: %s\n", store.Redact(o.Recommendation))
	}
	b.WriteString("\nAnswer in specs/ or fix_plan.md, then run `ralph run` again (or use --no-clarify).\n")
	if err := store.WriteFileAtomic(e.deps.Store.ClarificationFile(), []byte(b.String()), 0o644); err != nil {
		e.emit(loop.Event{Type: loop.EventWarning, Message: "write clarification.md: " + err.Error()})
	}
}

// Measure runs one agent call from st with the agent at index idx and
// returns what it measured, without deciding anything: a host that keeps
// the decisions elsewhere (a Temporal workflow running loop.Next and
// loop.Fold) uses the engine only as the edge. ok is false when ctx ended
// the call.
func (e *Engine) Measure(ctx context.Context, st loop.State, idx int) (it loop.Iteration, ok bool, err error) {
	if idx < 0 || idx >= len(e.deps.Agents) || idx >= len(e.spec.Agents) {
		return it, false, fmt.Errorf("agent %d: only %d configured", idx, len(e.deps.Agents))
	}
	if err := e.deps.Store.EnsureDirs(); err != nil {
		return it, false, err
	}
	e.st = st
	e.callCap = e.costCap(e.hostCap)
	if err := e.protect(ctx); err != nil {
		return it, false, err
	}
	before, _ := e.readPlan()
	return e.measure(ctx, idx, before)
}

// tampered reports whether err is a guard refusing git: a sandboxed agent
// changed what host git would run.
func tampered(err error) bool {
	var te *gitx.TamperError
	return errors.As(err, &te)
}

// outside lists the plan file when it lies outside the project (a
// daemon's task file, in its home): a sandbox hides the home but binds
// that one file for the agent to tick.
func outside(project, plan string) []string {
	rel, err := filepath.Rel(project, plan)
	if plan == "" || err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return nil
	}
	return []string{plan}
}
