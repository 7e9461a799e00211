package loop

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRecordBoundsGateDecisions(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range []int{0, 1, MaxGateDecisions, MaxGateDecisions + 7} {
		var ds []GateDecision
		for i := range n {
			ds = append(ds, GateDecision{At: at, Item: fmt.Sprintf("a%d", i+1), What: "Bash(ls)", Outcome: "allowed once", Surface: "cli"})
		}
		m := Record(Iteration{Loop: 1, Decisions: ds}, Decision{}, State{})
		keep := min(n, MaxGateDecisions)
		if len(m.Decisions) != keep || m.DecisionsDropped != n-keep {
			t.Errorf("%d decisions: the receipt keeps %d and drops %d", n, len(m.Decisions), m.DecisionsDropped)
		}
		if n > 0 && m.Decisions[0].Item != "a1" {
			t.Errorf("the receipt does not keep the first: %+v", m.Decisions[0])
		}
	}
}

func TestGateDecisionString(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		d    GateDecision
		want string
	}{
		{GateDecision{At: at, Item: "a1", What: "Bash(ls)", Outcome: "allowed once", Surface: "telegram", User: "42"}, "03:04:05 Bash(ls) allowed once (a1) by telegram:42"},
		{GateDecision{At: at, What: "Bash(ls)", Outcome: "allowed (for this task, earlier)"}, "03:04:05 Bash(ls) allowed (for this task, earlier)"},
		{GateDecision{At: at, Item: "a2", What: "Write(x)", Outcome: "denied", Surface: "cli"}, "03:04:05 Write(x) denied (a2) by cli"},
	} {
		if got := tc.d.String(); got != tc.want || strings.Contains(got, "  ") {
			t.Errorf("%+v reads %q, want %q", tc.d, got, tc.want)
		}
	}
}
