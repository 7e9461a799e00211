package loop

import "time"

// GateDecision is a person's decision on a tool call the agent waited on
// inside its call (package gate), as the iteration's receipt keeps it: who
// decided what, when, from where. What is masked before it gets here.
type GateDecision struct {
	At   time.Time `json:"at"`
	Item string    `json:"item,omitempty"` // a1; "" for a call an earlier "allow for this task" let run
	What string    `json:"what"`           // Bash(npm publish)
	// Outcome is "allowed once", "allowed for this task", "allowed (for
	// this task, earlier)", "denied" or "denied (no decision in time)".
	Outcome string `json:"outcome"`
	Surface string `json:"surface,omitempty"` // cli, telegram, web, api…
	User    string `json:"user,omitempty"`
}

// MaxGateDecisions bounds the decisions one receipt keeps: a call that
// asks without end does not grow its record without end.
const MaxGateDecisions = 20

// boundDecisions keeps the first MaxGateDecisions and counts the rest.
func boundDecisions(ds []GateDecision) ([]GateDecision, int) {
	if len(ds) <= MaxGateDecisions {
		return ds, 0
	}
	return ds[:MaxGateDecisions:MaxGateDecisions], len(ds) - MaxGateDecisions
}

// String is the decision on one line, as receipts print it.
func (g GateDecision) String() string {
	s := g.At.UTC().Format("15:04:05") + " " + g.What + " " + g.Outcome
	if g.Item != "" {
		s += " (" + g.Item + ")"
	}
	who := g.Surface
	if g.User != "" {
		who += ":" + g.User
	}
	if who != "" {
		s += " by " + who
	}
	return s
}
