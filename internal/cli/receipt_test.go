package cli

import (
	"strings"
	"testing"
	"time"

	"ralph/internal/loop"
	"ralph/internal/store"
)

// An iteration's receipt lists the decisions people made on its tool
// calls, one a line, and says how many the record did not keep.
func TestReceiptListsGateDecisions(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := loop.Metrics{Loop: 1, Decision: "continue", Decisions: []loop.GateDecision{
		{At: at, Item: "a1", What: "Bash(npm publish)", Outcome: "allowed for this task", Surface: "telegram", User: "42"},
		{At: at, Item: "a2", What: "Bash(rm x)", Outcome: "denied", Surface: "cli"},
	}, DecisionsDropped: 3}
	if err := st.AppendMetrics(m); err != nil {
		t.Fatal(err)
	}
	got := receipt(st, 1)
	for _, want := range []string{
		"\n  decided: 03:04:05 Bash(npm publish) allowed for this task (a1) by telegram:42",
		"\n  decided: 03:04:05 Bash(rm x) denied (a2) by cli",
		"\n  decided: … 3 more not kept",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the receipt lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(receipt(st, 2), "decided") {
		t.Error("another iteration's receipt shows these decisions")
	}
}
