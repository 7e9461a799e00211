package engine

import (
	"fmt"
	"slices"
	"time"

	"ralph/internal/loop"
	"ralph/internal/plan"
	"ralph/internal/stop"
	"ralph/internal/store"
)

// Sight is what a host sees of a loop's files just before loop.Next: the
// required files, then the plan. Both hosts take it with Look and complete
// it with Observation — the local engine before each Next, a Temporal
// worker at the start of each call (and after it, for the decision that
// follows) — so that they cannot differ in what they read, or in what
// order. It is plain data: a workflow carries it in its history.
type Sight struct {
	// Missing are the required files that are gone; MissingErr an error
	// that kept them from being checked.
	Missing    []string  `json:"missing,omitempty"`
	MissingErr string    `json:"missing_err,omitempty"`
	Plan       stop.Plan `json:"plan"`
	// PlanWarning is the plan's first warning, with its line ("": none).
	PlanWarning string `json:"plan_warning,omitempty"`
}

// Look reads what Next needs of the files, in the order Next weighs them:
// the required files, then the plan (also returned whole, for the call's
// plan diff).
func Look(st Store, opts plan.Options) (Sight, plan.Plan) {
	var s Sight
	missing, err := st.RequiredFiles()
	if err != nil {
		s.MissingErr = err.Error()
	}
	s.Missing = missing
	pl, warn := readPlan(st, opts)
	s.Plan, s.PlanWarning = stopPlan(pl), warn
	return s, pl
}

// Observation completes what a host saw of the files with what it holds:
// the clock, the requests people made, the usage limits other loops saw.
func (s Sight) Observation(now time.Time, ctl loop.Control, shared map[string]loop.AgentLimit) loop.Observation {
	return loop.Observation{Now: now, Missing: s.Missing, MissingErr: s.MissingErr, Plan: s.Plan, Control: ctl, SharedLimits: shared}
}

// Same reports whether two looks saw the same files.
func (s Sight) Same(o Sight) bool {
	return slices.Equal(s.Missing, o.Missing) && s.MissingErr == o.MissingErr && s.Plan == o.Plan && s.PlanWarning == o.PlanWarning
}

// readPlan reads the plan; a plan that cannot be read is an empty one (the
// required files say why).
func readPlan(st Store, opts plan.Options) (plan.Plan, string) {
	pl, err := store.LoadPlan(st.ProjectDir(), st.FixPlanFile(), opts)
	if err != nil {
		return plan.Plan{}, ""
	}
	if len(pl.Warnings) > 0 {
		return pl, fmt.Sprintf("fix_plan.md:%d: %s", pl.Warnings[0].Line, pl.Warnings[0].Message)
	}
	return pl, ""
}

// PlanOptions are how the loop of spec reads its plan.
func PlanOptions(spec loop.Spec) plan.Options {
	return plan.Options{OptionalSections: spec.OptionalSections}
}
