package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/github/githubtest"
	"ralph/internal/requests/slacktest"
)

// A Slack request over Socket Mode whose agent (the scripted fake, calling
// ralph's gate through the bridge as Claude Code does) waits inside its
// call for a decision and then for an answer: each is posted in the
// thread with its buttons; a stranger's press decides nothing and is told
// so; the requester's Allow for this task and then an option's button are
// the tool results in the same call, and the work ends in a pull request.
// The receipt records the decision as Slack's, with who pressed.
func TestRequestsSlackGateButtonsOverSocketMode(t *testing.T) {
	done := script.Iteration{Files: map[string]string{"done.txt": "done\n"},
		StdoutLines: []json.RawMessage{clarity("COMPLETE", true, true, false, "", "Published.")}}
	gated := done
	gated.Gate = []script.GateCall{
		{Tool: "approve", Input: json.RawMessage(`{"tool_name":"Bash","input":{"command":"npm publish"}}`), ResultFile: "gate.txt"},
		{Tool: "ask", Input: json.RawMessage(`{"question":"Which registry?","options":["public","internal"]}`), ResultFile: "gate.txt"},
	}
	r, fs := newSlackRig(t, script.Script{RepeatLast: true, Iterations: []script.Iteration{gated, done}}, "SLACK_APP_TOKEN="+slackApp)
	r.Start(1)
	for deadline := time.Now().Add(30 * time.Second); !fs.Connected(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no Socket Mode connection; log:\n%s", r.Log.String())
		}
	}
	root := fmt.Sprintf("%d.000100", time.Now().Unix())
	session := "slack-callow-" + strings.ReplaceAll(root, ".", "")
	body, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "<@UBOT> Publish it", TS: root}, true)
	if _, err := fs.Send(body); err != nil {
		t.Fatal(err)
	}
	press := func(m slacktest.Message, b slacktest.Button, user string) {
		t.Helper()
		if _, err := fs.SendInteractive(slacktest.Interaction(m, b, user)); err != nil {
			t.Fatal(err)
		}
	}
	a := waitSlack(t, fs, "CALLOW", root, "npm publish")
	if len(a.Buttons) != 3 || a.Buttons[1].Text != "☑️ Allow for this task" {
		t.Fatalf("approval %+v", a)
	}
	press(a, a.Buttons[0], "UMALLORY")
	waitUntil(t, "the stranger told", func() bool { return len(fs.Ephemerals()) == 1 })
	if v := r.Status(session); len(v.Pending) != 1 || v.Pending[0].ID != "a1" {
		t.Fatalf("after a stranger's press: %+v", v.Pending)
	}
	press(a, a.Buttons[1], "UALICE")
	q := waitSlack(t, fs, "CALLOW", root, "Which registry?")
	if len(q.Buttons) != 2 || q.Buttons[1].Text != "internal" {
		t.Fatalf("question %+v", q)
	}
	press(q, q.Buttons[1], "UALICE")
	waitSlack(t, fs, "CALLOW", root, "Pull request: ")
	if got, want := r.Git("", "--git-dir", r.remote, "show", "ralph/"+session+":gate.txt"),
		`{"behavior":"allow","updatedInput":{"command":"npm publish"}}`+"\ninternal\n"; got != want {
		t.Errorf("the agent's tool results: %q, want %q", got, want)
	}
	var detail struct {
		Iterations []struct {
			Loop      int
			Decisions []struct{ Item, Outcome, Surface, User string }
		}
	}
	if err := json.Unmarshal([]byte(r.OK("show", r.Status(session).ID, "--json")), &detail); err != nil {
		t.Fatal(err)
	}
	if len(detail.Iterations) == 0 || len(detail.Iterations[0].Decisions) != 1 {
		t.Fatalf("receipts %+v", detail.Iterations)
	}
	if d := detail.Iterations[0].Decisions[0]; d.Item != "a1" || d.Outcome != "allowed for this task" || d.Surface != "slack" || d.User != "UALICE" {
		t.Errorf("the decision is recorded as %+v", d)
	}
	for _, m := range fs.Messages("CALLOW") {
		if m.TS == a.TS && !strings.Contains(m.Text, "allowed for this task by <@UALICE>") || m.TS == q.TS && !strings.Contains(m.Text, "answered by <@UALICE>: internal") {
			t.Errorf("after the decision: %+v", m)
		}
	}
}

// waitUntil waits for what another process makes true, for a minute at
// the most.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never %s", what)
		}
	}
}

// A GitHub request whose agent waits inside its call for a decision: the
// issue gets a comment with the item's id and commands; a stranger's
// "/ralph approve a1" decides nothing (it comes first: had it counted, it
// would have decided), a writer's "/ralph deny a1 REASON" is the tool's
// result in the same call, and the comment then says who denied it.
func TestRequestsGitHubGateComments(t *testing.T) {
	done := script.Iteration{Files: map[string]string{"done.txt": "done\n"},
		StdoutLines: []json.RawMessage{clarity("COMPLETE", true, true, false, "", "Went on without it.")}}
	gated := done
	gated.Gate = []script.GateCall{{Tool: "approve", Input: json.RawMessage(`{"tool_name":"Bash","input":{"command":"npm publish"}}`), ResultFile: "gate.txt"}}
	r := newRequestRig(t, script.Script{RepeatLast: true, Iterations: []script.Iteration{gated, done}})
	r.Start(1)
	n := r.gh.AddIssue("acme/app", githubtest.Issue{Title: "Publish it", Body: "Please.", Labels: []string{"ralph"}, Author: "alice"})
	c := r.waitComment(n, "`/ralph approve a1`")
	if !strings.Contains(c.Body, "`Bash(npm publish)`") || !strings.Contains(c.Body, "`/ralph approve a1 --task`") {
		t.Errorf("the approval comment: %s", c.Body)
	}
	r.gh.AddComment("acme/app", n, "mallory", "/ralph approve a1")
	r.gh.AddComment("acme/app", n, "alice", "/ralph deny a1 not from here")
	r.waitComment(n, "**Decided:** a1 `Bash(npm publish)` — ⛔ denied by github:alice: not from here")
	r.waitComment(n, "Pull request: ")
	if got := r.Git("", "--git-dir", r.remote, "show", "ralph/github-1:gate.txt"); got != `{"behavior":"deny","message":"not from here"}`+"\n" {
		t.Errorf("the agent's tool result: %q", got)
	}
}
