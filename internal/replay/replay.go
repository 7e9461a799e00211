// Package replay makes a loop's recorded decisions again with today's
// rules (loop.Next, loop.Fold, loop.Checked) and sets each beside the one
// recorded, so that a change to a stop rule shows which past decisions it
// would have changed. It reads two kinds of recording: iteration records
// (.ralph/logs/metrics.jsonl, the daemon's iteration rows), whose replay
// inputs (loop.Replay) make each iteration replayable on its own, and
// decision traces ($RALPH_TRACE), which replay a whole run in order.
// Replaying decides nothing new and touches nothing: it is pure over what
// it is given.
package replay

import (
	"fmt"
	"strings"

	"ralph/internal/loop"
)

// Rules are the decisions a replay makes. Today returns the loop's own; a
// test hands in changed ones (a rule changed on purpose) to see which
// recorded decisions they would change.
type Rules struct {
	Next    func(loop.State, loop.Observation, loop.Policy) (loop.State, loop.Step)
	Fold    func(loop.State, loop.Iteration, loop.Policy) (loop.State, loop.Decision)
	Checked func(loop.State, loop.Decision, loop.VerifyRun, loop.Policy) (loop.State, loop.Decision)
}

// Today are the rules of this build.
func Today() Rules { return Rules{Next: loop.Next, Fold: loop.Fold, Checked: loop.Checked} }

// Steps of a row: which decision it is.
const (
	StepNext   = "next"
	StepFold   = "fold"
	StepVerify = "verify"
)

// None stands for a decision one side did not make (a check today's rules
// would not ask for).
const None = "-"

// Row is one recorded decision beside today's. A row with Skipped set is
// a record that cannot be replayed, and why.
type Row struct {
	Where    string // file:line, or the task and loop
	Loop     int
	Step     string // StepNext, StepFold or StepVerify
	Recorded string // the decision's label (loop.StepLabel, loop.Decision.Label)
	Today    string
	// Message is what today's rules said, shown for a difference.
	Message string
	Skipped string
}

// Diff names what differs between the recorded and today's decision:
// "" when they agree, else "kind", the detail ("reason", "agent",
// "wait") or both.
func (r Row) Diff() string { return Diff(r.Recorded, r.Today) }

// Diff compares two labels ("kind:detail", see Row.Recorded).
func Diff(recorded, today string) string {
	if recorded == today {
		return ""
	}
	rk, rd := split(recorded)
	tk, td := split(today)
	var out []string
	if rk != tk {
		out = append(out, "kind")
	}
	if rd != td {
		switch k := tk; {
		case rk == tk && k == "call":
			out = append(out, "agent")
		case rk == tk && k == "wait":
			out = append(out, "wait")
		default:
			out = append(out, "reason")
		}
	}
	return strings.Join(out, ", ")
}

// split reads a label: "continue" is a call with no detail, as the
// record's "continue" is Fold's go-on.
func split(label string) (kind, detail string) {
	kind, detail, _ = strings.Cut(label, ":")
	if kind == "continue" {
		kind = "call"
	}
	return kind, detail
}

// Report is a replay's rows and their counts.
type Report struct {
	Rows []Row
	// Replayed counts the decisions made again, Differ those that came
	// out differently, Skipped the records that could not be replayed.
	Replayed, Differ, Skipped int
}

func (r *Report) add(row Row) {
	r.Rows = append(r.Rows, row)
	switch {
	case row.Skipped != "":
		r.Skipped++
	default:
		r.Replayed++
		if row.Diff() != "" {
			r.Differ++
		}
	}
}

// Exit codes of `ralph replay`, apart from `ralph run`'s 2–9 and the
// lifecycle commands' 10–14 so that a script never mistakes a changed
// decision for a loop's exit.
const (
	ExitDiffers = 20 // today's rules decide at least one recorded decision differently
	ExitNothing = 21 // nothing could be replayed (every record predates the replay inputs)
)

// ExitCode is the report's exit code: 0 when every decision replayed
// agrees.
func (r Report) ExitCode() int {
	switch {
	case r.Differ > 0:
		return ExitDiffers
	case r.Replayed == 0:
		return ExitNothing
	}
	return 0
}

// Record is one iteration record and where it was read.
type Record struct {
	Where  string
	Metric loop.Metrics
}

// Records replays iteration records, each from the inputs it kept: a
// difference in one never changes what the next is compared with.
func Records(recs []Record, rules Rules) Report {
	var rep Report
	for _, r := range recs {
		for _, row := range replayRecord(r, rules) {
			rep.add(row)
		}
	}
	return rep
}

// NotReplayable says why a record cannot be replayed ("" when it can).
func NotReplayable(m loop.Metrics) string {
	switch {
	case m.Replay == nil:
		return "not replayable: no inputs kept (recorded before ralph kept them, or read by the watchdog from a tmux pane)"
	case m.Replay.V > loop.ReplayVersion:
		return fmt.Sprintf("not replayable: recorded by a newer ralph (replay version %d; this one reads up to %d)", m.Replay.V, loop.ReplayVersion)
	case m.Replay.V < 1:
		return fmt.Sprintf("not replayable: unknown replay version %d", m.Replay.V)
	}
	return ""
}

func replayRecord(r Record, rules Rules) []Row {
	m := r.Metric
	if why := NotReplayable(m); why != "" {
		return []Row{{Where: r.Where, Loop: m.Loop, Skipped: why}}
	}
	in := m.Replay
	p := in.Policy
	row := func(step, recorded, today, msg string) Row {
		return Row{Where: r.Where, Loop: m.Loop, Step: step, Recorded: recorded, Today: today, Message: msg}
	}
	st, step := rules.Next(in.Before, in.Observation, p)
	rows := []Row{row(StepNext, in.Next, loop.StepLabel(step, p), step.Message)}
	st, d := rules.Fold(st, in.Iteration, p)
	rows = append(rows, row(StepFold, in.Fold, d.Label(), d.Message))
	// The claim's check: the recorded run is folded again when today's
	// rules claim too; a check only one side asks for is a difference.
	recordedCheck := m.Verify != nil
	switch {
	case d.Kind == loop.Check && recordedCheck:
		_, c := rules.Checked(st, d, *m.Verify, p)
		rows = append(rows, row(StepVerify, m.Decision, c.Label(), c.Message))
	case recordedCheck:
		rows = append(rows, row(StepVerify, m.Decision, None, "today's rules claim no success here, so nothing is checked"))
	}
	return rows
}
