package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/fakeapi"
	"ralph/internal/gate"
	"ralph/internal/requests/slacktest"
	"ralph/internal/servetest"
)

const (
	gateSlackBot    = "xoxb-1234567890-gatetoken"
	gateSlackSecret = "gate-slack-signing-secret"
)

// makeTurn runs a command outside the allow-list: the call waits for a
// decision.
var makeTurn = fakeapi.ToolTurn("Making it.", "Bash", map[string]string{"command": "echo made > made-by-bash", "description": "make a file"})

// askTurn asks with the gate's ask tool, with options.
var askTurn = fakeapi.ToolTurn("I need to know.", gate.AskTool, map[string]any{"question": "Which database?", "options": []string{"sqlite", "postgres"}})

// playThen plays first in the agent's first call, then again in every
// later call: ralph takes a completion once the agent says it twice.
func (r *claudeRequests) playThen(first []fakeapi.Turn, then ...fakeapi.Turn) {
	r.t.Helper()
	if err := r.api.Play(fakeapi.Script{RepeatLast: true, Iterations: []fakeapi.Iteration{{Turns: first}, {Turns: then}}}); err != nil {
		r.t.Fatal(err)
	}
}

// sameCall checks that the first n model requests (a tool call, what
// came after the person's decision or answer) were one agent call.
func sameCall(t *testing.T, r *claudeRequests, n int) {
	t.Helper()
	reqs := r.api.MessageRequests()
	if len(reqs) < n {
		t.Fatalf("%d model requests, want at least %d", len(reqs), n)
	}
	for i, req := range reqs[:n] {
		if req.Iteration != 0 || req.Turn != i {
			t.Fatalf("model request %d is turn %d of call %d: the person's decision cost a new call", i, req.Turn, req.Iteration)
		}
	}
}

// decisions are the gate's decisions in the receipts of task id's
// iterations, as `ralph task show --json` gives them.
func decisions(t *testing.T, c servetest.Client, id string) []struct{ Item, What, Outcome, Surface, User string } {
	t.Helper()
	var detail struct {
		Iterations []struct {
			Decisions []struct{ Item, What, Outcome, Surface, User string }
		}
	}
	if err := json.Unmarshal([]byte(c.OK("show", id, "--json")), &detail); err != nil {
		t.Fatal(err)
	}
	var out []struct{ Item, What, Outcome, Surface, User string }
	for _, it := range detail.Iterations {
		out = append(out, it.Decisions...)
	}
	return out
}

// A Slack request's agent (the real Claude Code CLI) runs a command
// outside the allow-list: the call waits, and the thread gets the tool
// call with Allow once / Allow for this task / Deny buttons. A forged
// press gets 401, a stranger's press is told (to them alone) that it did
// nothing; the requester's Allow once runs the command in the same call
// and the message then says who allowed it. The agent then asks with the
// gate's ask tool: the question comes to the thread with its options as
// buttons, and the requester's reply in the thread is the tool's result,
// still in the same call. The receipt records the decision as Slack's.
func TestRequestsGateSlackWithClaude(t *testing.T) {
	fs := slacktest.Start(t, slacktest.Options{BotToken: gateSlackBot})
	r := newClaudeRequests(t, "SLACK_BOT_TOKEN="+gateSlackBot, "SLACK_API_URL="+fs.URL, "SLACK_SIGNING_SECRET="+gateSlackSecret,
		"RALPH_SLACK_REPO=acme/app", "RALPH_SLACK_CHANNELS=CALLOW", "RALPH_SLACK_USERS=UALICE")
	r.playThen([]fakeapi.Turn{makeTurn, askTurn, claim("Made the file.")}, claim("Made the file."))
	c := servetest.Client{T: t, Ralph: servetest.PlainRalph(t), Env: r.env, Addr: r.addr}
	events, interactive := "http://"+r.addr+"/webhooks/slack", "http://"+r.addr+"/webhooks/slack/interactive"
	root := fmt.Sprintf("%d.000100", time.Now().Unix())
	session := "slack-callow-" + strings.ReplaceAll(root, ".", "")
	say := func(user, text, thread string, mention bool) {
		t.Helper()
		ts := fmt.Sprintf("%d.%06d", time.Now().Unix(), time.Now().Nanosecond()/1000)
		if thread == "" {
			ts = root
		}
		body, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: user, Text: text, TS: ts, ThreadTS: thread}, mention)
		if code, _, err := slacktest.Post(events, gateSlackSecret, time.Now(), body, 0); err != nil || code != http.StatusOK {
			t.Fatalf("event: %d %v", code, err)
		}
	}
	pressed := func(m slacktest.Message, b slacktest.Button, user, secret string) int {
		t.Helper()
		code, _, err := slacktest.Press(interactive, secret, time.Now(), slacktest.Interaction(m, b, user))
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	message := func(what string, cond func(slacktest.Message) bool) slacktest.Message {
		t.Helper()
		var found slacktest.Message
		r.wait(what, func() bool {
			for _, m := range fs.Messages("CALLOW") {
				if m.ThreadTS == root && cond(m) {
					found = m
					return true
				}
			}
			return false
		})
		return found
	}
	say("UALICE", "<@UBOT> Make a file", "", true)

	a := message("the approval with its buttons", func(m slacktest.Message) bool {
		return strings.Contains(m.Text, "echo made &gt; made-by-bash") && len(m.Buttons) == 3 // escaped: Slack reads &lt;&gt;
	})
	if a.Buttons[0].Text != "✅ Allow once" || a.Buttons[1].Text != "☑️ Allow for this task" || a.Buttons[2].Text != "⛔ Deny" {
		t.Fatalf("buttons %+v", a.Buttons)
	}
	if code := pressed(a, a.Buttons[0], "UALICE", "forged-secret"); code != http.StatusUnauthorized {
		t.Errorf("a forged press: %d, want 401", code)
	}
	// The press is carried out before its reply: what it did is done.
	if code := pressed(a, a.Buttons[0], "UMALLORY", gateSlackSecret); code != http.StatusOK {
		t.Errorf("a stranger's press: %d", code)
	}
	if v := c.Status(session); v.State != "waiting" || len(v.Pending) != 1 || v.Pending[0].ID != "a1" {
		t.Fatalf("after a stranger's press: %s %+v", v.State, v.Pending)
	}
	if e := fs.Ephemerals(); len(e) != 1 || e[0].User != "UMALLORY" {
		t.Errorf("the stranger was not told: %+v", e)
	}
	if code := pressed(a, a.Buttons[0], "UALICE", gateSlackSecret); code != http.StatusOK {
		t.Fatalf("the requester's press: %d", code)
	}

	q := message("the question with its options", func(m slacktest.Message) bool {
		return strings.Contains(m.Text, "Which database?") && len(m.Buttons) == 2
	})
	if q.Buttons[0].Text != "sqlite" || q.Buttons[1].Text != "postgres" {
		t.Errorf("options %+v", q.Buttons)
	}
	made, err := os.ReadFile(filepath.Join(r.home, "requests", "work", session, "made-by-bash"))
	if err != nil || string(made) != "made\n" {
		t.Fatalf("allowed from Slack, the command did not run: %q %v", made, err)
	}
	say("UALICE", "postgres, please", root, false)
	message("the pull request's link", func(m slacktest.Message) bool { return strings.Contains(m.Text, "Pull request: ") })

	if !r.toolSaw("postgres, please") {
		t.Error("the reply in the thread was not the ask tool's result")
	}
	sameCall(t, r, 3)
	for _, m := range fs.Messages("CALLOW") {
		switch m.TS {
		case a.TS:
			if len(m.Buttons) != 0 || !strings.Contains(m.Text, "allowed once by <@UALICE>") {
				t.Errorf("the approval after the decision: %+v", m)
			}
		case q.TS:
			if len(m.Buttons) != 0 || !strings.Contains(m.Text, "answered by <@UALICE>: postgres, please") {
				t.Errorf("the question after its answer: %+v", m)
			}
		}
	}
	ds := decisions(t, c, c.Status(session).ID)
	if len(ds) != 1 || ds[0].Item != "a1" || ds[0].Outcome != "allowed once" || ds[0].Surface != "slack" || ds[0].User != "UALICE" {
		t.Errorf("the receipt's decisions: %+v", ds)
	}
}

// A GitHub request's agent runs a command outside the allow-list: the
// issue gets a comment with the item's id and the commands. A comment
// "/ralph approve a1" by someone without write access decides nothing; the
// same by a writer runs the command in the same call, the comment is
// edited to say so, and the receipt records the writer's decision.
func TestRequestsGateGitHubWithClaude(t *testing.T) {
	r := newClaudeRequests(t)
	r.playThen([]fakeapi.Turn{makeTurn, claim("Made the file.")}, claim("Made the file."))
	c := servetest.Client{T: t, Ralph: servetest.PlainRalph(t), Env: r.env, Addr: r.addr}
	n := r.file("Make a file", "Please.")
	posted := r.waitSaid(n, "`/ralph approve a1`")
	if !strings.Contains(posted, "echo made > made-by-bash") || !strings.Contains(posted, "`/ralph deny a1 [reason]`") {
		t.Errorf("the approval comment: %s", posted)
	}
	// The stranger speaks first: had their command counted, it would
	// have decided before the writer's.
	r.gh.AddComment("acme/app", n, "mallory", "/ralph approve a1")
	r.gh.AddComment("acme/app", n, "alice", "/ralph approve a1")
	r.waitSaid(n, "**Decided:** a1")
	r.wait("the pushed branch with the file", func() bool { return r.show("ralph/github-1", "made-by-bash") == "made\n" })
	sameCall(t, r, 2)
	if d := r.said(n, "**Decided:** a1"); !strings.Contains(d, "allowed once by github:alice") {
		t.Errorf("the approval comment after the decision: %s", d)
	}
	if r.said(n, "mallory") != "" {
		t.Error("a stranger was answered")
	}
	ds := decisions(t, c, c.Status("gh-acme-app-1").ID)
	if len(ds) != 1 || ds[0].Outcome != "allowed once" || ds[0].Surface != "github" || ds[0].User != "alice" {
		t.Errorf("the receipt's decisions: %+v", ds)
	}
}
