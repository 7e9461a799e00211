package temporal

import (
	"encoding/json"
	"testing"

	"ralph/internal/gate"
)

func TestGateMatch(t *testing.T) {
	bash := func(cmd string) *gate.Approval {
		return &gate.Approval{Tool: "Bash", Input: json.RawMessage(`{"command":"` + cmd + `"}`)}
	}
	q := func(text string, opts ...string) *gate.Question { return &gate.Question{Text: text, Options: opts} }
	item := func(id string, attempt int32, a *gate.Approval, qq *gate.Question) *gateItem {
		return &gateItem{GateItem: GateItem{ID: id, Approval: a, Question: qq}, attempt: attempt}
	}
	decided := func(it *gateItem) *gateItem { it.verdict = &GateVerdict{ID: it.ID, Allow: true}; return it }
	expired := func(it *gateItem) *gateItem { it.expired = true; return it }
	used := func(it *gateItem) *gateItem { it.used = true; return it }
	for _, tc := range []struct {
		name  string
		items []*gateItem
		ask   GateAsk
		want  string // the matched item's id; "" a new item
	}{
		{"nothing pending", nil, GateAsk{Attempt: 1, Approval: bash("make")}, ""},
		{"another command", []*gateItem{item("a1", 1, bash("make"), nil)}, GateAsk{Attempt: 1, Approval: bash("make -j")}, ""},
		{"a twin asked at once waits with it", []*gateItem{item("a1", 1, bash("make"), nil)}, GateAsk{Attempt: 1, Approval: bash("make")}, "a1"},
		{"the retry of a lost attempt waits on its item", []*gateItem{item("a1", 1, bash("make"), nil)}, GateAsk{Attempt: 2, Approval: bash("make")}, "a1"},
		{"the retry takes a decision made for the lost attempt", []*gateItem{decided(item("a1", 1, bash("make"), nil))}, GateAsk{Attempt: 2, Approval: bash("make")}, "a1"},
		{"the same attempt asking again asks anew", []*gateItem{decided(item("a1", 1, bash("make"), nil))}, GateAsk{Attempt: 1, Approval: bash("make")}, ""},
		{"a decision taken by a retry is not taken twice", []*gateItem{used(decided(item("a1", 1, bash("make"), nil)))}, GateAsk{Attempt: 3, Approval: bash("make")}, ""},
		{"a wait that ran out is over", []*gateItem{expired(item("a1", 1, bash("make"), nil))}, GateAsk{Attempt: 2, Approval: bash("make")}, ""},
		{"the same question", []*gateItem{item("q1", 1, nil, q("Which?", "a", "b"))}, GateAsk{Attempt: 2, Question: q("Which?", "a", "b")}, "q1"},
		{"other options are another question", []*gateItem{item("q1", 1, nil, q("Which?", "a", "b"))}, GateAsk{Attempt: 2, Question: q("Which?", "a")}, ""},
		{"options are not words", []*gateItem{item("q1", 1, nil, q("Which?", "a b"))}, GateAsk{Attempt: 1, Question: q("Which?", "a", "b")}, ""},
		{"a question is no tool call", []*gateItem{item("q1", 1, nil, q("make"))}, GateAsk{Attempt: 1, Approval: bash("make")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if it := match(tc.items, tc.ask); it != nil {
				got = it.ID
			}
			if got != tc.want {
				t.Errorf("match = %q, want %q", got, tc.want)
			}
		})
	}
}
