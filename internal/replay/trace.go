package replay

import (
	"fmt"

	"ralph/internal/loop"
)

// TraceLine is one decision of a trace and where it was read.
type TraceLine struct {
	Where string
	Trace loop.Trace
}

// Traces replays a run's decision trace in order, carrying today's state
// from each decision to the next as the run did: a difference may change
// what follows it, as it would have in the run.
func Traces(lines []TraceLine, rules Rules) (Report, error) {
	var rep Report
	var st loop.State
	var p loop.Policy
	started := false
	for _, l := range lines {
		tr := l.Trace
		row := func(step, recorded, today, msg string) {
			rep.add(Row{Where: l.Where, Loop: st.Loop, Step: step, Recorded: recorded, Today: today, Message: msg})
		}
		switch {
		case tr.Begin != nil:
			if tr.Policy == nil {
				return rep, fmt.Errorf("%s: a run's start without its policy", l.Where)
			}
			st, p, started = *tr.Begin, *tr.Policy, true
		case !started:
			return rep, fmt.Errorf("%s: a decision before the run began (the trace lacks its start)", l.Where)
		case tr.Next != nil:
			var step loop.Step
			st, step = rules.Next(st, tr.Next.Observation, p)
			row(StepNext, loop.StepLabel(tr.Next.Step, p), loop.StepLabel(step, p), step.Message)
		case tr.Fold != nil:
			var d loop.Decision
			st, d = rules.Fold(st, tr.Fold.Iteration, p)
			row(StepFold, tr.Fold.Decision.Label(), d.Label(), d.Message)
		case tr.Check != nil:
			var d loop.Decision
			st, d = rules.Checked(st, tr.Check.Claim, tr.Check.Run, p)
			row(StepVerify, tr.Check.Decision.Label(), d.Label(), d.Message)
		default:
			return rep, fmt.Errorf("%s: not a decision (no begin, next, fold or check)", l.Where)
		}
	}
	return rep, nil
}
