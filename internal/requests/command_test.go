package requests

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

func TestParseGateCommands(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Parsed
	}{
		{"/ralph approve a1", Parsed{Cmd: CmdApprove, Item: "a1"}},
		{"/RALPH Approve A12.", Parsed{Cmd: CmdApprove, Item: "a12"}},
		{"/ralph approve a1 --task", Parsed{Cmd: CmdApprove, Item: "a1", ForTask: true}},
		{"@ralph approve a3 —task", Parsed{Cmd: CmdApprove, Item: "a3", ForTask: true}},
		{"/ralph approve", Parsed{Cmd: CmdApprove, Problem: "say which one: /ralph approve ID (the id the message shows, like a1)"}},
		{"/ralph approve q1", Parsed{Cmd: CmdApprove, Text: "", Problem: "say which one: /ralph approve ID (the id the message shows, like a1)"}},
		{"/ralph deny a2", Parsed{Cmd: CmdDeny, Item: "a2"}},
		{"/ralph deny a2 Not on a Friday.\nUse the staging box.", Parsed{Cmd: CmdDeny, Item: "a2", Text: "Not on a Friday.\nUse the staging box."}},
		{"/ralph deny", Parsed{Cmd: CmdDeny, Problem: "say which one: /ralph deny ID (the id the message shows, like a1)"}},
		{"/ralph answer q1 Postgres, please", Parsed{Cmd: CmdAnswer, Item: "q1", Text: "Postgres, please"}},
		{"/ralph answer Postgres", Parsed{Cmd: CmdAnswer, Text: "Postgres"}},
		{"/ralph answer q2\nLine one\nLine two", Parsed{Cmd: CmdAnswer, Item: "q2", Text: "Line one\nLine two"}},
		{"/ralph answer", Parsed{Cmd: CmdAnswer, Problem: "an answer needs its text: /ralph answer [ID] TEXT"}},
		{"/ralph answer q1", Parsed{Cmd: CmdAnswer, Item: "q1", Problem: "an answer needs its text: /ralph answer [ID] TEXT"}},
		// Bare, as a Slack reply (after the mention) says it.
		{"approve a1", Parsed{Cmd: CmdApprove, Item: "a1"}},
		{"approve a1 --task", Parsed{Cmd: CmdApprove, Item: "a1", ForTask: true}},
		{"deny a4 too risky", Parsed{Cmd: CmdDeny, Item: "a4", Text: "too risky"}},
		{"answer q1 sqlite", Parsed{Cmd: CmdAnswer, Item: "q1", Text: "sqlite"}},
		// Conversation: no id, or one of the wrong kind, or not first.
		{"approve the plan", Parsed{}},
		{"deny q1", Parsed{}},
		{"answer a1 yes", Parsed{}},
		{"I approve a1\n", Parsed{}},
		{"Thanks.\n/ralph approve a1", Parsed{}},
		{"/ralph retry", Parsed{Cmd: CmdRetry}},
		{"/ralph dance a1", Parsed{Cmd: CmdUnknown}},
	} {
		if got := Parse(tc.in); got != tc.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/ralph approve a1 --task", "/ralph deny a2 no\nreally", "answer q1 x", "/ralph answer", "approve a1", "/ralph retry", "\x00/ralph\tdeny a9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Parse(s)
		if p.Cmd != ParseCommand(s) {
			t.Fatalf("Parse and ParseCommand disagree on %q", s)
		}
		if !p.Cmd.Gate() {
			if p != (Parsed{Cmd: p.Cmd}) {
				t.Fatalf("Parse(%q) = %+v: arguments without a gate command", s, p)
			}
			return
		}
		// An id is always a well-formed one of the right kind; only
		// approve allows for the task; approve has no text.
		if p.Item != "" && !bareItem(p.Cmd, p.Item) {
			t.Fatalf("Parse(%q) item %q", s, p.Item)
		}
		if p.ForTask && p.Cmd != CmdApprove || p.Cmd == CmdApprove && p.Text != "" {
			t.Fatalf("Parse(%q) = %+v", s, p)
		}
		// A command that can be carried out says nothing is wrong, and one
		// that cannot says why.
		ready := p.Item != "" && p.Cmd != CmdAnswer || p.Cmd == CmdAnswer && p.Text != ""
		if ready == (p.Problem != "") {
			t.Fatalf("Parse(%q) = %+v: problem %q", s, p, p.Problem)
		}
		if p.Text != strings.TrimSpace(p.Text) || utf8.ValidString(s) && !utf8.ValidString(p.Text) {
			t.Fatalf("Parse(%q) text %q", s, p.Text)
		}
	})
}

func TestGateVerb(t *testing.T) {
	v := waitingView
	durable := serve.TaskView{ID: "t7", State: fleet.Waiting, Questions: []string{"Which?"}}
	for _, tc := range []struct {
		name string
		v    serve.TaskView
		p    Parsed
		want fleet.Command
		why  string
	}{
		{"allow once", v, Parsed{Cmd: CmdApprove, Item: "a1"}, fleet.Command{Verb: fleet.Approve, Item: "a1"}, ""},
		{"allow for the task", v, Parsed{Cmd: CmdApprove, Item: "a1", ForTask: true}, fleet.Command{Verb: fleet.Approve, Item: "a1", ForTask: true}, ""},
		{"deny with a reason", v, Parsed{Cmd: CmdDeny, Item: "a1", Text: "no"}, fleet.Command{Verb: fleet.Deny, Item: "a1", Text: "no"}, ""},
		{"an item that does not wait", v, Parsed{Cmd: CmdApprove, Item: "a9"}, fleet.Command{}, "No tool call a9 waits for a decision (waiting: a1, q2)."},
		{"a question's id is no tool call", v, Parsed{Cmd: CmdDeny, Item: "q2"}, fleet.Command{}, "No tool call q2 waits for a decision (waiting: a1, q2)."},
		{"answer the call's question", v, Parsed{Cmd: CmdAnswer, Item: "q2", Text: "pg"}, fleet.Command{Verb: fleet.Answer, Text: "pg"}, ""},
		{"answer without an id", v, Parsed{Cmd: CmdAnswer, Text: "pg"}, fleet.Command{Verb: fleet.Answer, Text: "pg"}, ""},
		{"answer another question", v, Parsed{Cmd: CmdAnswer, Item: "q5", Text: "pg"}, fleet.Command{}, "No question q5 waits for an answer (waiting: a1, q2)."},
		{"answer the durable question", durable, Parsed{Cmd: CmdAnswer, Text: "pg"}, fleet.Command{Verb: fleet.Answer, Text: "pg"}, ""},
		{"answer when nothing is asked", serve.TaskView{State: fleet.Running}, Parsed{Cmd: CmdAnswer, Text: "pg"}, fleet.Command{}, "No question waits for an answer."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, why := gateVerb(tc.v, tc.p)
			if c != tc.want || why != tc.why {
				t.Errorf("gateVerb = %+v, %q; want %+v, %q", c, why, tc.want, tc.why)
			}
		})
	}
}

func TestReadPress(t *testing.T) {
	for _, tc := range []struct {
		action, value string
		want          press
		ok            bool
	}{
		{actionAllow, "t3|a1", press{action: actionAllow, task: "t3", item: "a1", option: -1}, true},
		{actionAllowTask, "t3|a1", press{action: actionAllowTask, task: "t3", item: "a1", option: -1}, true},
		{actionDeny, "t3|a12", press{action: actionDeny, task: "t3", item: "a12", option: -1}, true},
		{actionAnswer + "1", "t3|q2|1", press{action: actionAnswer + "1", task: "t3", item: "q2", option: 1}, true},
		{actionAllow, "t3|q2", press{}, false},          // a question is not allowed
		{actionAnswer + "0", "t3|a1|0", press{}, false}, // nor a tool call answered
		{actionAnswer + "0", "t3|q2|-1", press{}, false},
		{actionAllow, "t3|a1|x", press{}, false},
		{actionAllow, "|a1", press{}, false},
		{"other_app_button", "t3|a1", press{}, false},
	} {
		got, ok := readPress(&slack.BlockAction{ActionID: tc.action, Value: tc.value})
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("readPress(%s, %s) = %+v %v, want %+v %v", tc.action, tc.value, got, ok, tc.want, tc.ok)
		}
	}
}
