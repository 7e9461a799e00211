package temporal

import (
	"encoding/json"
	"strings"
	"testing"

	"ralph/internal/gate"
	"ralph/internal/redact"
)

func TestGateMatch(t *testing.T) {
	redact.Add("s3cr3t-one-9f8e", "s3cr3t-two-7a6b")
	// bash is the ask for a Bash command, as the worker sends it.
	bash := func(cmd string) GateAsk {
		return GateAskOf(gate.Approval{Tool: "Bash", Input: json.RawMessage(`{"command":"` + cmd + `"}`)})
	}
	q := func(text string, opts ...string) GateAsk {
		return GateAsk{Question: &gate.Question{Text: text, Options: opts}}
	}
	item := func(id string, attempt int32, a GateAsk) *gateItem {
		return &gateItem{GateItem: GateItem{ID: id, Approval: a.Approval, Question: a.Question}, attempt: attempt, key: a.Key, grant: a.Grant}
	}
	at := func(attempt int32, a GateAsk) GateAsk { a.Attempt = attempt; return a }
	decided := func(it *gateItem) *gateItem { it.verdict = &GateVerdict{ID: it.ID, Allow: true}; return it }
	expired := func(it *gateItem) *gateItem { it.expired = true; return it }
	used := func(it *gateItem) *gateItem { it.used = true; return it }
	for _, tc := range []struct {
		name  string
		items []*gateItem
		ask   GateAsk
		want  string // the matched item's id; "" a new item
	}{
		{"nothing pending", nil, at(1, bash("make")), ""},
		{"another command", []*gateItem{item("a1", 1, bash("make"))}, at(1, bash("make -j")), ""},
		{"a twin asked at once waits with it", []*gateItem{item("a1", 1, bash("make"))}, at(1, bash("make")), "a1"},
		{"the retry of a lost attempt waits on its item", []*gateItem{item("a1", 1, bash("make"))}, at(2, bash("make")), "a1"},
		{"the retry takes a decision made for the lost attempt", []*gateItem{decided(item("a1", 1, bash("make")))}, at(2, bash("make")), "a1"},
		{"the same attempt asking again asks anew", []*gateItem{decided(item("a1", 1, bash("make")))}, at(1, bash("make")), ""},
		{"a decision taken by a retry is not taken twice", []*gateItem{used(decided(item("a1", 1, bash("make"))))}, at(3, bash("make")), ""},
		{"a wait that ran out is over", []*gateItem{expired(item("a1", 1, bash("make")))}, at(2, bash("make")), ""},
		{"the same question", []*gateItem{item("q1", 1, q("Which?", "a", "b"))}, at(2, q("Which?", "a", "b")), "q1"},
		{"other options are another question", []*gateItem{item("q1", 1, q("Which?", "a", "b"))}, at(2, q("Which?", "a")), ""},
		{"options are not words", []*gateItem{item("q1", 1, q("Which?", "a b"))}, at(1, q("Which?", "a", "b")), ""},
		{"a question is no tool call", []*gateItem{item("q1", 1, q("make"))}, at(1, bash("make")), ""},
		{"a secret masked alike is another command", []*gateItem{item("a1", 1, bash("curl -H 'X: s3cr3t-one-9f8e'"))}, at(2, bash("curl -H 'X: s3cr3t-two-7a6b'")), ""},
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

// What the workflow keeps of a tool call is masked, and the grant that
// would cover it names the exact command by its SHA-256 only: the same
// command is covered again, one that differs by a byte is not.
func TestGateAskOfKeepsNoSecret(t *testing.T) {
	redact.Add("s3cr3t-three-5c4d")
	call := func(cmd string) gate.Approval {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return gate.Approval{Tool: "Bash", Input: in}
	}
	a := GateAskOf(call("deploy --token s3cr3t-three-5c4d"))
	kept, _ := json.Marshal(a)
	if strings.Contains(string(kept), "s3cr3t-three-5c4d") {
		t.Fatalf("the ask keeps the secret: %s", kept)
	}
	if a.Grant == nil || a.Grant.Tool != "Bash" || !strings.HasPrefix(a.Grant.Command, "sha256:") || strings.Contains(a.Grant.Command, "deploy") {
		t.Fatalf("grant %+v", a.Grant)
	}
	if b := GateAskOf(call("deploy --token s3cr3t-three-5c4d")); *b.Grant != *a.Grant || b.Key != a.Key {
		t.Error("the same command is not known again")
	}
	if b := GateAskOf(call("deploy  --token s3cr3t-three-5c4d")); *b.Grant == *a.Grant || b.Key == a.Key {
		t.Error("a command that differs by a space is covered")
	}
	if w := GateAskOf(gate.Approval{Tool: "Write", Input: json.RawMessage(`{"file_path":"a"}`)}); w.Grant == nil || *w.Grant != (gate.Grant{Tool: "Write"}) {
		t.Errorf("another tool's grant is %+v, want its name", w.Grant)
	}
	if n := GateAskOf(gate.Approval{Tool: "Bash", Input: json.RawMessage(`{}`)}); n.Grant != nil {
		t.Errorf("a Bash call without its command can be granted: %+v", n.Grant)
	}
}
