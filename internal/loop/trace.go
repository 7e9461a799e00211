package loop

// Trace is one decision as a loop made it: a run's start, a Next or a Fold
// with its input and answer. A run's traces replay through Next and Fold
// alone (see the replay test): a recorded run that decides differently
// today is a changed decision, caught before a user meets it. `ralph run`
// writes them as JSON lines to the file named by $RALPH_TRACE.
type Trace struct {
	// Begin is the state a run started from, after Begin, with its policy.
	Begin  *State      `json:"begin,omitempty"`
	Policy *Policy     `json:"policy,omitempty"`
	Next   *TraceNext  `json:"next,omitempty"`
	Fold   *TraceFold  `json:"fold,omitempty"`
	Check  *TraceCheck `json:"check,omitempty"`
}

// TraceNext is one Next: what it saw and what it answered.
type TraceNext struct {
	Observation Observation `json:"observation"`
	Step        Step        `json:"step"`
}

// TraceFold is one Fold: the iteration and the decision.
type TraceFold struct {
	Iteration Iteration `json:"iteration"`
	Decision  Decision  `json:"decision"`
}

// TraceCheck is one Checked: the claim, the verify command's run and the
// decision.
type TraceCheck struct {
	Claim    Decision  `json:"claim"`
	Run      VerifyRun `json:"run"`
	Decision Decision  `json:"decision"`
}
