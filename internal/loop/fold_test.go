package loop

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/ratelimit"
	"ralph/internal/reason"
	"ralph/internal/stop"
)

var t0 = time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)

func policy() Policy {
	return Policy{Breaker: breaker.DefaultThresholds(), Limits: ratelimit.DefaultLimits(),
		UsageLimitWait: time.Hour, UsageLimitMargin: time.Minute}
}

func an(mut func(*analyze.Analysis)) Observed {
	a := &analyze.Analysis{Status: analyze.StatusInProgress, TestsStatus: analyze.TestsUnknown, FilesModified: -1,
		TasksRemaining: -1, OutputBytes: 5000, Usage: analyze.Usage{InputTokens: 100, OutputTokens: 50, CostUSD: 0.01}}
	if mut != nil {
		mut(a)
	}
	return Observe(a)
}

// Fold's verdicts as the tables name them: go on, wait for a usage limit
// (Next does the waiting), stop.
type verdict int

const (
	Continue verdict = iota
	Wait_
	Stop_
	// Ask_: a question for a person; Next waits for the answer or stops.
	Ask_
)

func verdictOf(d Decision) verdict {
	switch {
	case d.Kind == Stop:
		return Stop_
	case d.Kind == Wait:
		return Ask_
	case d.UsageLimit:
		return Wait_
	}
	return Continue
}

var openPlan = stop.Plan{Known: true, Total: 3, Open: 2, NextOpen: "Add login"}

type foldStep struct {
	it         Iteration
	wantAction verdict
	wantReason reason.Reason
	wantFix    string
}

func TestFold(t *testing.T) {
	working := Iteration{InRepo: true, Changed: true, Files: 2, Plan: openPlan, Observed: an(nil)}
	idle := Iteration{InRepo: true, Plan: openPlan, Observed: an(nil)}
	complete := Iteration{InRepo: true, Changed: true, Plan: stop.Plan{Known: true, Total: 3}, Observed: an(func(a *analyze.Analysis) {
		a.Status, a.ExitSignal, a.ExitSignalExplicit, a.TestsStatus, a.CompletionIndicators = analyze.StatusComplete, true, true, analyze.TestsPassing, 2
	})}
	denied := Iteration{InRepo: true, Plan: openPlan, Observed: an(func(a *analyze.Analysis) {
		a.PermissionDenials = []analyze.Denial{{Tool: "Bash", Command: "npm install"}}
	})}
	limited := Iteration{InRepo: true, ExitCode: 1, Plan: openPlan, Observed: an(func(a *analyze.Analysis) {
		a.IsError = true
		a.UsageLimit = analyze.UsageLimit{Detected: true, Kind: "five_hour", ResetsAt: "2026-11-20T21:00:00Z", Message: "You've hit your 5-hour limit"}
	})}
	failing := Iteration{InRepo: true, ExitCode: 1, Plan: openPlan, Observed: an(func(a *analyze.Analysis) { a.IsError = true })}
	questions := Iteration{InRepo: true, Plan: openPlan, Observed: an(func(a *analyze.Analysis) { a.AskingQuestions, a.QuestionCount = true, 1 })}
	clarify := Iteration{InRepo: true, Plan: openPlan, Observed: an(func(a *analyze.Analysis) {
		a.Status, a.ClarificationNeeded, a.ClarificationQuestions = analyze.StatusNeedsClarification, true, []string{"Which DB?"}
	})}
	notLoggedIn := Iteration{InRepo: true, ExitCode: 1, Plan: openPlan, Observed: an(func(a *analyze.Analysis) {
		a.IsError, a.SetupFailure = true, analyze.SetupFailure{Detected: true, Kind: analyze.SetupAuth, Message: "Not logged in · Please run /login"}
	})}
	// What the request prompt asks a stuck agent to say: BLOCKED, and stop.
	blockedStop := Iteration{InRepo: true, Plan: stop.Plan{Known: true, Total: 3}, Observed: an(func(a *analyze.Analysis) {
		a.Status, a.ExitSignal, a.ExitSignalExplicit, a.CompletionIndicators = analyze.StatusBlocked, true, true, 2
		a.Recommendation = "the API key for the payment sandbox is missing"
	})}
	blocked := Iteration{InRepo: true, Plan: openPlan, Observed: an(func(a *analyze.Analysis) { a.Status = analyze.StatusBlocked })}
	testOnly := Iteration{InRepo: true, Plan: openPlan, Observed: an(func(a *analyze.Analysis) { a.IsTestOnly, a.TestsStatus = true, analyze.TestsPassing })}
	outsideGit := Iteration{InRepo: false, Plan: openPlan, Observed: an(func(a *analyze.Analysis) { a.FilesModified = 2 })}
	timedOutWithChanges := Iteration{InRepo: true, TimedOut: true, ExitCode: 124, Changed: true, Plan: openPlan, Observed: an(nil)}
	timedOutIdle := Iteration{InRepo: true, TimedOut: true, ExitCode: 124, Plan: openPlan, Observed: an(nil)}

	answerable := func(p *Policy) { p.Answerable = true }
	cases := []struct {
		name  string
		p     func(*Policy)
		steps []foldStep
	}{
		{"progress goes on", nil, []foldStep{{working, Continue, "", ""}, {working, Continue, "", ""}}},
		{"completion stops with exit 0", nil, []foldStep{{working, Continue, "", ""}, {complete, Stop_, "project_complete", ""}}},
		{"no progress opens the breaker after 3", nil, []foldStep{{idle, Continue, "", ""}, {idle, Continue, "", ""}, {idle, Stop_, reason.BreakerOpen, ""}}},
		{"questions neither count nor reset", nil, []foldStep{{idle, Continue, "", ""}, {questions, Continue, "", "asked questions"}, {idle, Continue, "", ""}, {idle, Stop_, reason.BreakerOpen, ""}}},
		{"permission denials twice stop with permission_denied", nil, []foldStep{{denied, Continue, "", "were refused: Bash(npm install)"}, {denied, Stop_, reason.PermissionDenied, ""}}},
		{"usage limit waits until the reset plus margin", nil, []foldStep{{limited, Wait_, "", ""}, {working, Continue, "", ""}}},
		{"usage limit with --on-usage-limit exit", func(p *Policy) { p.ExitOnUsageLimit = true }, []foldStep{{limited, Stop_, reason.UsageLimit, ""}}},
		{"usage limits do not count as failures", nil, []foldStep{{limited, Wait_, "", ""}, {limited, Wait_, "", ""}, {limited, Wait_, "", ""}, {limited, Wait_, "", ""}, {limited, Wait_, "", ""}, {limited, Wait_, "", ""}, {working, Continue, "", ""}}},
		{"five failures open the breaker", nil, []foldStep{{failing, Continue, "", ""}, {failing, Continue, "", ""}, {failing, Continue, "", ""}, {failing, Continue, "", ""}, {failing, Stop_, reason.BreakerOpen, ""}}},
		{"test saturation wins over the no-progress breaker", nil, []foldStep{{testOnly, Continue, "", ""}, {testOnly, Continue, "", ""}, {testOnly, Stop_, "test_saturation", ""}}},
		{"clarification asks a person where one answers", answerable, []foldStep{{clarify, Ask_, "needs_clarification", ""}}},
		{"clarification ends the run where nobody answers", nil, []foldStep{{clarify, Stop_, "needs_clarification", ""}}},
		{"the call after a question settles it", answerable, []foldStep{{clarify, Ask_, "needs_clarification", ""}, {working, Continue, "", ""}}},
		{"BLOCKED with EXIT_SIGNAL: true is a halt at once, never done", nil, []foldStep{{blockedStop, Stop_, reason.BreakerOpen, ""}}},
		{"BLOCKED alone strikes as no progress", nil, []foldStep{{blocked, Continue, "", ""}, {blocked, Continue, "", ""}, {blocked, Stop_, reason.BreakerOpen, ""}}},
		{"a setup failure stops at once", nil, []foldStep{{notLoggedIn, Stop_, reason.AgentSetup, ""}}},
		{"outside git the self-report counts", nil, []foldStep{{outsideGit, Continue, "", ""}, {outsideGit, Continue, "", ""}, {outsideGit, Continue, "", ""}, {outsideGit, Continue, "", ""}}},
		{"a timed-out iteration that changed files is productive", nil, []foldStep{{timedOutWithChanges, Continue, "", ""}, {timedOutWithChanges, Continue, "", ""}, {timedOutWithChanges, Continue, "", ""}, {timedOutWithChanges, Continue, "", ""}, {timedOutWithChanges, Continue, "", ""}}},
		{"idle timeouts are failures", nil, []foldStep{{timedOutIdle, Continue, "", ""}, {timedOutIdle, Continue, "", ""}, {timedOutIdle, Continue, "", ""}, {timedOutIdle, Continue, "", ""}, {timedOutIdle, Stop_, reason.BreakerOpen, ""}}},
		{"a contradicted claim is answered", nil, []foldStep{{Iteration{InRepo: true, Changed: true, Plan: openPlan, Observed: an(func(a *analyze.Analysis) {
			a.Status, a.ExitSignal, a.ExitSignalExplicit, a.CompletionIndicators = analyze.StatusComplete, true, true, 2
		})}, Continue, "", "fix_plan.md still has 2 open item(s)"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := policy()
			if tc.p != nil {
				tc.p(&p)
			}
			st := State{Breaker: breaker.New(t0)}
			at := t0
			for i, s := range tc.steps {
				at = at.Add(time.Minute)
				s.it.Loop, s.it.Ended = i+1, at
				var out Decision
				st, out = Fold(st, s.it, p)
				if verdictOf(out) != s.wantAction || out.Reason != s.wantReason {
					t.Fatalf("step %d: got %d reason %q (%s), want %d %q", i+1, verdictOf(out), out.Reason, out.Message, s.wantAction, s.wantReason)
				}
				if s.wantFix != "" && !strings.Contains(strings.Join(st.Corrections, " "), s.wantFix) {
					t.Fatalf("step %d: corrections %q, want %q", i+1, st.Corrections, s.wantFix)
				}
				if verdictOf(out) == Wait_ && !out.HeldUntil.Equal(time.Date(2026, 11, 20, 21, 1, 0, 0, time.UTC)) {
					t.Fatalf("step %d: held until %v", i+1, out.HeldUntil)
				}
			}
			if st.Loop != len(tc.steps) || len(st.Calls.Calls) != len(tc.steps) {
				t.Errorf("loop %d, calls recorded %d, want %d", st.Loop, len(st.Calls.Calls), len(tc.steps))
			}
		})
	}
}

func TestFoldTotalsAndSession(t *testing.T) {
	st := State{Breaker: breaker.New(t0)}
	st, out := Fold(st, Iteration{Loop: 1, Ended: t0, InRepo: true, Changed: true, Observed: an(nil)}, policy())
	st, _ = Fold(st, Iteration{Loop: 2, Ended: t0.Add(time.Minute), InRepo: true, Changed: true, Observed: an(nil)}, policy())
	if st.Tokens != 300 || st.CostUSD < 0.0199 || st.CostUSD > 0.0201 {
		t.Errorf("totals %d tokens $%f", st.Tokens, st.CostUSD)
	}
	if out.ResetSession != "" {
		t.Errorf("progress reset the session: %q", out.ResetSession)
	}
	_, out = Fold(st, Iteration{Loop: 3, Ended: t0, ExitCode: 1, Observed: an(func(a *analyze.Analysis) { a.IsError = true })}, policy())
	if out.ResetSession == "" {
		t.Error("is_error did not reset the session")
	}
}

func TestBuildContext(t *testing.T) {
	got := BuildContext(ContextInput{Loop: 4, PlanKnown: true, PlanOpen: 3, PlanTotal: 7, NextTask: "Add login",
		Breaker: breaker.HalfOpen, BreakerNote: "no progress in 2 iterations", LastSummary: "Added the parser.",
		Corrections: []string{"You set EXIT_SIGNAL: true, but fix_plan.md still has 3 open item(s)."}})
	for _, want := range []string{"[ralph loop 4]", "fix_plan.md still has 3 open", "3 of 7 tasks open; next: Add login",
		"Circuit breaker HALF_OPEN", "Previous iteration: Added the parser."} {
		if !strings.Contains(got, want) {
			t.Errorf("context %q lacks %q", got, want)
		}
	}
	if strings.Index(got, "EXIT_SIGNAL") > strings.Index(got, "tasks open") {
		t.Error("corrections should come before the plan")
	}
	closed := BuildContext(ContextInput{Loop: 1, Breaker: breaker.Closed})
	if strings.Contains(closed, "breaker") {
		t.Errorf("a closed breaker is not mentioned: %q", closed)
	}
	long := BuildContext(ContextInput{Loop: 9, LastSummary: strings.Repeat("é long summary ", 100), Corrections: []string{strings.Repeat("fix ", 50)}})
	if len(long) > MaxContext || !utf8.ValidString(long) || !strings.Contains(long, "fix fix") {
		t.Errorf("bounded context: %d bytes, valid %v", len(long), utf8.ValidString(long))
	}
}

func TestCallUsage(t *testing.T) {
	an := func(session string, cost float64, in int64) Observed {
		return Observed{SessionID: session, Usage: analyze.Usage{CostUSD: cost, InputTokens: in, OutputTokens: in / 10}}
	}
	u := func(cost float64, in int64) analyze.Usage {
		return analyze.Usage{CostUSD: cost, InputTokens: in, OutputTokens: in / 10}
	}
	claudeLike := [2]bool{true, false} // cumulative cost, per-call tokens
	codexLike := [2]bool{false, true}
	tests := []struct {
		name     string
		prev     SessionUsage
		a        Observed
		cum      [2]bool
		want     analyze.Usage
		wantNext SessionUsage
	}{
		{"first call of a session", SessionUsage{}, an("s1", 0.32, 1000), claudeLike, u(0.32, 1000), SessionUsage{"s1", u(0.32, 1000)}},
		{"claude resumed: the cost's growth, the tokens as reported", SessionUsage{"s1", u(0.32, 1000)}, an("s1", 0.63, 900), claudeLike,
			u(0.31, 900), SessionUsage{"s1", u(0.63, 900)}},
		{"codex resumed: the tokens' growth", SessionUsage{"t1", u(0, 1000)}, an("t1", 0, 2500), codexLike,
			analyze.Usage{InputTokens: 1500, OutputTokens: 150}, SessionUsage{"t1", u(0, 2500)}},
		{"a new session counts in full", SessionUsage{"s1", u(0.63, 1000)}, an("s2", 0.30, 500), claudeLike, u(0.30, 500), SessionUsage{"s2", u(0.30, 500)}},
		{"a lower total is not a refund", SessionUsage{"s1", u(0.63, 1000)}, an("s1", 0.10, 100), claudeLike, u(0.10, 100), SessionUsage{"s1", u(0.10, 100)}},
		{"per-call reports are taken as they are", SessionUsage{"s1", u(0.30, 1000)}, an("s1", 0.40, 1000), [2]bool{}, u(0.40, 1000), SessionUsage{"s1", u(0.30, 1000)}},
		{"no session id: as reported, memory kept", SessionUsage{"s1", u(0.63, 1)}, an("", 0.05, 10), claudeLike, u(0.05, 10), SessionUsage{"s1", u(0.63, 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, next := callUsage(tt.prev, tt.a, tt.cum[0], tt.cum[1])
			if d := got.CostUSD - tt.want.CostUSD; d > 1e-9 || d < -1e-9 {
				t.Errorf("cost %v, want %v", got.CostUSD, tt.want.CostUSD)
			}
			got.CostUSD, tt.want.CostUSD = 0, 0
			if got != tt.want || next != tt.wantNext {
				t.Errorf("callUsage = %+v, %+v; want %+v, %+v", got, next, tt.want, tt.wantNext)
			}
		})
	}
}

// The record carries the status block's fields, a copy the caller may keep
// (the fleet's history and task file show them).
func TestRecordKeepsStatusBlock(t *testing.T) {
	o := an(func(a *analyze.Analysis) {
		a.StatusBlock = &analyze.StatusBlock{Dialect: "RALPH_STATUS", Fields: map[string]string{"STATUS": "IN_PROGRESS", "TASKS_REMAINING": "2"}}
	})
	it := Iteration{Loop: 3, Started: t0, Ended: t0.Add(time.Second), Observed: o}
	rec := Record(it, Decision{}, State{})
	if rec.StatusBlock["TASKS_REMAINING"] != "2" || rec.StatusBlock["STATUS"] != "IN_PROGRESS" {
		t.Fatalf("status block %v", rec.StatusBlock)
	}
	rec.StatusBlock["STATUS"] = "changed"
	if o.StatusBlock["STATUS"] != "IN_PROGRESS" {
		t.Error("the record shares the observation's map")
	}
	if Record(Iteration{Observed: an(nil)}, Decision{}, State{}).StatusBlock != nil {
		t.Error("no block, yet a status_block")
	}
}

// The analysis's confidence_score reaches the metrics line and the state
// status.json is written from; it decides nothing.
func TestConfidenceScoreIsRecorded(t *testing.T) {
	o := an(func(a *analyze.Analysis) { a.ConfidenceScore = 70 })
	it := Iteration{Loop: 1, Started: t0, Ended: t0.Add(time.Second), Observed: o}
	st, d := Fold(State{}, it, policy())
	if st.Last.Confidence == nil || *st.Last.Confidence != 70 {
		t.Fatalf("Last.Confidence = %v, want 70", st.Last.Confidence)
	}
	if m := Record(it, d, st); m.ConfidenceScore != 70 {
		t.Fatalf("metrics confidence_score = %d, want 70", m.ConfidenceScore)
	}
	low := an(func(a *analyze.Analysis) { a.ConfidenceScore = 0 })
	it.Observed = low
	_, d2 := Fold(State{}, it, policy())
	if d2.Label() != d.Label() {
		t.Fatalf("the score changed the decision: %s vs %s", d2.Label(), d.Label())
	}
}

func TestAnswerSection(t *testing.T) {
	if got := AnswerSection(Ask{Loop: 2, Questions: []string{"Which DB?"}}); got != "" {
		t.Errorf("no answer yet: %q", got)
	}
	got := AnswerSection(Ask{Loop: 2, Questions: []string{"Which DB?"}, Answer: " SQLite. "})
	if want := "\n\n## Answers to your questions\n\nYou asked a person (loop 2); they answered:\n\nQ: Which DB?\nA: SQLite.\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
