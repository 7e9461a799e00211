package loop

import "fmt"

// ReplayVersion is the version of Replay. Records without one (written
// before ralph kept it) cannot be replayed; a record of a later version
// than this build knows is refused rather than misread.
const ReplayVersion = 1

// Replay is what an iteration's record keeps so that its decisions can be
// made again by a later build (`ralph replay`): the inputs of the Next that
// chose the call and of the Fold after it, and what each answered. The
// verify command's run, when the claim was checked, is the record's own
// Verify; the final decision its Decision. Everything in it is already
// bounded (Observed bounds the agent's output) and the record is masked
// as a whole when it is written, so no secret is kept.
type Replay struct {
	V      int    `json:"v"`
	Policy Policy `json:"policy"`
	// Before is the state just before the Next that chose the call.
	Before      State       `json:"before"`
	Observation Observation `json:"observation"`
	Iteration   Iteration   `json:"iteration"`
	// Next and Fold are the labels of what each answered (StepLabel,
	// Decision.Label), before any check of a claimed success.
	Next string `json:"next"`
	Fold string `json:"fold"`
}

// StepLabel names what a step decided, as Decision.Label names a
// decision: "call:<agent>", "wait:<kind>", "stop:<reason>" or
// "verify:<reason>". The agent is named, not numbered, so that a policy
// with its agents reordered reads as a different decision.
func StepLabel(s Step, p Policy) string {
	switch s.Kind {
	case Call:
		if names := p.agents(); s.Agent >= 0 && s.Agent < len(names) && names[s.Agent] != "" {
			return "call:" + names[s.Agent]
		}
		return fmt.Sprintf("call:%d", s.Agent)
	case Wait:
		return "wait:" + s.WaitKind
	case Stop:
		return "stop:" + string(s.Reason)
	case Check:
		return "verify:" + string(s.Reason)
	}
	return "?"
}
