package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/fakeapi"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/telegram/telegramtest"
)

// A tool call waiting for a decision outlives its daemon (kill -9 and
// SIGTERM alike): the call dies, the restarted daemon shows the approval
// again, `ralph task approve` (after the kill) or the Telegram notice's
// Allow once button (pressed after the SIGTERM) decides it, and the task's
// next call resumes the agent session that asked with the decision in its
// prompt — the command, run again, runs without asking a second time.
func TestServeGateApprovalSurvivesRestartWithClaude(t *testing.T) {
	for _, how := range []string{"kill", "term"} {
		t.Run(how, func(t *testing.T) {
			again := fakeapi.Iteration{Turns: []fakeapi.Turn{
				fakeapi.ToolTurn("Running it again.", "Bash", map[string]string{"command": "touch made-by-bash", "description": "make a file"}),
				fakeapi.TextTurn("Bash said: {{tool_result}}" + statusBlock("COMPLETE", true)),
			}}
			const token = "gate-e2e-TOKEN"
			api := telegramtest.New(token)
			t.Cleanup(api.Close)
			g := newGateRig(t, "", []fakeapi.Iteration{bashIteration, again},
				"TELEGRAM_BOT_TOKEN="+token, "TELEGRAM_ALLOWED_CHATS=42", "TELEGRAM_API_URL="+api.URL)
			g.c.WaitFor("db", "waiting for a decision", servetest.StateIs("waiting"))
			m, ok := api.WaitSent(0, 60*time.Second, func(m telegramtest.Message) bool { return strings.Contains(m.Text, "asks to run") })
			if !ok || len(m.Buttons) != 3 {
				t.Fatalf("the chat got no approval with buttons: %+v", api.Sent())
			}
			restart(t, g, how)
			v := g.c.Status("db")
			if v.State != "waiting" || v.Message != "waiting: approval a1 for Bash(touch made-by-bash)" ||
				len(v.Pending) != 1 || v.Pending[0].ID != "a1" || v.Pending[0].Kind != "approval" {
				t.Fatalf("after the restart the task shows %s %q, pending %+v", v.State, v.Message, v.Pending)
			}
			if status := g.c.OK("status", "db"); !strings.Contains(status, "pending a1 approval: Bash(touch made-by-bash)") {
				t.Errorf("ralph task status after the restart:\n%s", status)
			}
			by := "cli"
			if how == "kill" {
				g.c.OK("approve", "db", "a1")
			} else {
				api.Press(telegramtest.Person{Chat: 42, User: 42}, m.MessageID, m.Buttons[0].Data)
				by = "telegram:42"
			}
			v = g.c.WaitFor("db", "done", servetest.StateIs("done"))
			if _, err := os.Stat(filepath.Join(g.dir, "made-by-bash")); err != nil {
				t.Fatalf("allowed after the restart, the command did not run: %v", err)
			}
			reqs := g.srv.MessageRequests()
			var first *fakeapi.Request
			for i := range reqs {
				if reqs[i].Iteration == 1 && reqs[i].Turn == 0 {
					first = &reqs[i]
				}
			}
			if first == nil {
				t.Fatalf("no call after the restart: %d requests", len(reqs))
			}
			p := first.Messages.Prompts()
			if len(p) < 2 || first.Messages.CountRole("assistant") == 0 {
				t.Errorf("the call after the restart did not resume the agent session that asked: prompts %q", p)
			}
			if len(p) == 0 || !strings.Contains(p[len(p)-1], "Bash(touch made-by-bash): a person ("+by) || !strings.Contains(p[len(p)-1], "run it again") {
				t.Errorf("the next call's prompt lacks the decision: %q", p)
			}
			if v.LoopCount != 1 {
				t.Errorf("%d loops; the killed call left no record, the resumed one is the task's first", v.LoopCount)
			}
			shown := g.c.OK("show", v.ID)
			for _, want := range []string{"Bash(touch made-by-bash) allowed once (a1) by " + by, "Bash(touch made-by-bash) allowed (decided after the restart)"} {
				if !strings.Contains(shown, want) {
					t.Errorf("ralph task show lacks %q:\n%s", want, shown)
				}
			}
		})
	}
}

// "Allow for this task" outlives the daemon: allowed inside the first call,
// the same command runs unasked in the call after a restart; and a deny
// given after the restart reaches that call's prompt with its reason.
func TestServeGateGrantSurvivesRestartWithClaude(t *testing.T) {
	first := fakeapi.Iteration{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("Counting.", "Bash", map[string]string{"command": "echo run >> runs.txt", "description": "count"}),
		fakeapi.ToolTurn("Other.", "Bash", map[string]string{"command": "touch other", "description": "make a file"}),
		fakeapi.TextTurn("Done." + statusBlock("COMPLETE", true)),
	}}
	after := fakeapi.Iteration{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("Counting again.", "Bash", map[string]string{"command": "echo run >> runs.txt", "description": "count"}),
		fakeapi.TextTurn("Done." + statusBlock("COMPLETE", true)),
	}}
	g := newGateRig(t, "", []fakeapi.Iteration{first, after})
	g.c.WaitFor("db", "waiting for a decision", servetest.StateIs("waiting"))
	g.c.OK("approve", "--task", "db", "a1")
	g.c.WaitFor("db", "waiting for the other command", func(v serve.TaskView) bool {
		return v.State == "waiting" && strings.Contains(v.Message, "touch other")
	})
	restart(t, g, "kill")
	v := g.c.Status("db")
	if len(v.Pending) != 1 || v.Pending[0].ID != "a2" {
		t.Fatalf("after the restart, pending %+v", v.Pending)
	}
	g.c.OK("deny", "db", "a2", "not", "on", "a", "Friday")
	v = g.c.WaitFor("db", "done", servetest.StateIs("done"))
	runs, _ := os.ReadFile(filepath.Join(g.dir, "runs.txt"))
	if string(runs) != "run\nrun\n" {
		t.Fatalf("runs.txt is %q: the command allowed for the task did not run unasked after the restart", runs)
	}
	if _, err := os.Stat(filepath.Join(g.dir, "other")); err == nil {
		t.Error("the denied command ran")
	}
	reqs := g.srv.MessageRequests()
	last := reqs[len(reqs)-1]
	if p := last.Messages.Prompts(); len(p) == 0 || !strings.Contains(p[len(p)-1], "denied it: not on a Friday") {
		t.Errorf("the next call's prompt lacks the denial and its reason: %q", p)
	}
	var detail struct {
		Iterations []struct {
			Decisions []struct{ Item, What, Outcome, Surface string }
		}
	}
	if err := json.Unmarshal([]byte(g.c.OK("show", v.ID, "--json")), &detail); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(detail.Iterations)
	if len(detail.Iterations) != 1 || !strings.Contains(got, "a2 Bash(touch other) denied cli") || !strings.Contains(got, "allowed (for this task, earlier)") {
		t.Errorf("the receipt after the restart: %s", got)
	}
}

// restart ends the rig's daemon (kill -9, or SIGTERM) and starts it again.
func restart(t *testing.T, g *gateRig, how string) {
	t.Helper()
	if how == "term" {
		if err := g.proc.Stop(); err != nil {
			t.Logf("SIGTERM: %v", err)
		}
	} else {
		g.proc.Kill()
	}
	g.proc = g.serve()
}
