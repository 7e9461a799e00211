package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/gate"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
	"ralph/internal/telegram/telegramtest"
)

// The real Claude Code CLI under the real daemon asks with the gate's ask
// tool: the task shows the question while the call waits, `ralph task
// answer` answers it, and the answer is the tool's result in the same call
// (the fake model API records the request that carries it), which then
// finishes the task in that one loop.
func TestServeGateAskWithClaude(t *testing.T) {
	c, srv, home := gateDaemon(t, "")
	v := c.WaitFor("db", "waiting with the call's question", func(v serve.TaskView) bool {
		return v.State == "waiting" && len(v.Questions) > 0
	})
	if v.Questions[0] != "Which database?" || !strings.Contains(strings.Join(v.Questions, "\n"), "sqlite / postgres") ||
		!strings.HasPrefix(v.Message, "waiting: question q1: Which database?") {
		t.Fatalf("the task shows %q, %q", v.Questions, v.Message)
	}
	first := srv.MessageRequests()
	if len(first) != 1 {
		t.Fatalf("%d model requests while the question waits; want the one that asked", len(first))
	}
	if p := first[0].Messages.Prompts(); len(p) == 0 || !strings.Contains(p[len(p)-1], "mcp__ralph__ask tool") {
		t.Errorf("the task's prompt does not tell the agent to ask with the tool: %q", p)
	}
	c.OK("answer", "db", "postgres")
	v = c.WaitFor("db", "done", servetest.StateIs("done"))
	if v.LoopCount != 1 {
		t.Errorf("the answer cost a new call: %d loops", v.LoopCount)
	}
	reqs := srv.MessageRequests()
	if len(reqs) != 2 || reqs[1].Iteration != 0 || reqs[1].Turn != 1 {
		t.Fatalf("requests %d; the answer did not come back in the same call", len(reqs))
	}
	if got := toolResultText(t, reqs[1].Body); got != "postgres" {
		t.Errorf("the model received %q as the tool's result", got)
	}
	archived, _ := os.ReadFile(filepath.Join(home, "handoffs", "archive", "db-"+v.ID+"-task.md"))
	if !strings.Contains(string(archived), "postgres") {
		t.Errorf("the answer is not in the task file's record:\n%s", archived)
	}
}

// The question inside the call reaches the allowed Telegram chat as a
// question to reply to; a stranger's reply decides nothing, the owner's is
// the tool's result in the same call.
func TestServeGateAskTelegramWithClaude(t *testing.T) {
	const token = "gate-e2e-TOKEN"
	owner, stranger := telegramtest.Person{Chat: 42, User: 42}, telegramtest.Person{Chat: 666, User: 666}
	api := telegramtest.New(token)
	t.Cleanup(api.Close)
	c, srv, _ := gateDaemon(t, "", "TELEGRAM_BOT_TOKEN="+token, "TELEGRAM_ALLOWED_CHATS=42", "TELEGRAM_API_URL="+api.URL)
	q, ok := api.WaitSent(0, 60*time.Second, func(m telegramtest.Message) bool { return strings.Contains(m.Text, "Which database?") })
	if !ok || q.ChatID != 42 || !q.ForceReply {
		t.Fatalf("the chat got no question to reply to: %+v", api.Sent())
	}
	api.Reply(stranger, q.MessageID, "sqlite, says a stranger")
	time.Sleep(2 * time.Second)
	if v := c.Status("db"); v.State != "waiting" || len(srv.MessageRequests()) != 1 {
		t.Fatalf("a stranger's reply decided: %+v", v)
	}
	api.Reply(owner, q.MessageID, "postgres")
	v := c.WaitFor("db", "done", servetest.StateIs("done"))
	reqs := srv.MessageRequests()
	if v.LoopCount != 1 || len(reqs) != 2 || toolResultText(t, reqs[1].Body) != "postgres" {
		t.Fatalf("%d loops, %d requests; the agent got %q", v.LoopCount, len(reqs), toolResultText(t, reqs[len(reqs)-1].Body))
	}
}

// The call dies with its daemon (kill -9); the question survives: the
// restarted daemon shows it, and the answer starts the task's next call
// with the answer in its prompt.
// A SIGTERM ends the call the same way: the question stays.
func TestServeGateAskSurvivesRestartWithClaude(t *testing.T) {
	for _, how := range []string{"kill", "term"} {
		t.Run(how, func(t *testing.T) { askSurvivesRestart(t, how) })
	}
}

func askSurvivesRestart(t *testing.T, how string) {
	g := newGateRig(t, "", []fakeapi.Iteration{askIteration, {Turns: []fakeapi.Turn{fakeapi.TextTurn("Going on." + statusBlock("COMPLETE", true))}}})
	g.c.WaitFor("db", "waiting with the call's question", func(v serve.TaskView) bool { return v.State == "waiting" && len(v.Questions) > 0 })
	restart(t, g, how)
	if v := g.c.Status("db"); v.State != "waiting" || len(v.Questions) == 0 || v.Questions[0] != "Which database?" ||
		len(v.Pending) != 1 || v.Pending[0].ID != "q1" || v.Pending[0].Kind != "question" {
		t.Fatalf("after the restart: %+v", v)
	}
	g.c.OK("answer", "db", "postgres")
	v := g.c.WaitFor("db", "done", servetest.StateIs("done"))
	reqs := g.srv.MessageRequests()
	last := reqs[len(reqs)-1]
	// The killed call left no record: the answered one is the task's first.
	if last.Iteration != 1 || v.LoopCount != 1 {
		t.Fatalf("%d loops; the last request was iteration %d", v.LoopCount, last.Iteration)
	}
	p := last.Messages.Prompts()
	if len(p) == 0 || !strings.Contains(p[len(p)-1], "postgres") {
		t.Errorf("the next call's prompt lacks the answer: %q", p)
	}
	// The call resumes the agent session that asked.
	if len(p) < 2 || last.Messages.CountRole("assistant") == 0 || !strings.Contains(p[0], "Pick a database") {
		t.Errorf("the next call did not resume the session that asked: prompts %q", p)
	}
}

// A Bash command outside the allow-list waits inside the call for a
// decision: the task shows it, `ralph task approve` allows it once and the
// command runs in the same call; `ralph task deny` refuses it and the
// model reads why.
func TestServeGateApproveDenyWithClaude(t *testing.T) {
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprint("allow=", allow), func(t *testing.T) {
			g := newGateRig(t, "", []fakeapi.Iteration{bashIteration})
			g.decideBash(t, allow)
		})
	}
}

// The decision from Telegram: the approval notice carries Allow once and
// Deny buttons; a stranger's press (forged in their own chat) decides
// nothing, the owner's Allow once runs the command in the same call.
func TestServeGateApproveTelegramWithClaude(t *testing.T) {
	const token = "gate-e2e-TOKEN"
	owner, stranger := telegramtest.Person{Chat: 42, User: 42}, telegramtest.Person{Chat: 666, User: 666}
	api := telegramtest.New(token)
	t.Cleanup(api.Close)
	g := newGateRig(t, "", []fakeapi.Iteration{bashIteration}, "TELEGRAM_BOT_TOKEN="+token, "TELEGRAM_ALLOWED_CHATS=42", "TELEGRAM_API_URL="+api.URL)
	m, ok := api.WaitSent(0, 60*time.Second, func(m telegramtest.Message) bool { return strings.Contains(m.Text, "asks to run") })
	if !ok || m.ChatID != 42 || !strings.Contains(m.Text, "touch made-by-bash") || len(m.Buttons) != 3 {
		t.Fatalf("the chat got no approval with buttons: %+v", api.Sent())
	}
	allow := m.Buttons[0]
	if allow.Text != "✅ Allow once" || m.Buttons[1].Text != "☑️ Allow for this task" || m.Buttons[2].Text != "⛔ Deny" {
		t.Fatalf("buttons %+v", m.Buttons)
	}
	api.Press(stranger, 0, allow.Data)
	time.Sleep(2 * time.Second)
	if v := g.c.Status("db"); v.State != "waiting" || len(g.srv.MessageRequests()) != 1 {
		t.Fatalf("a stranger's press decided: %+v", v)
	}
	api.Press(owner, m.MessageID, allow.Data)
	v := g.c.WaitFor("db", "done", servetest.StateIs("done"))
	if _, err := os.Stat(filepath.Join(g.dir, "made-by-bash")); err != nil || v.LoopCount != 1 {
		t.Fatalf("allowed from the chat, the command did not run in the call: %v, %d loops", err, v.LoopCount)
	}
}

// "Allow for this task" covers the exact command for the rest of the task:
// the same Bash command again runs without a prompt, a different one still
// asks. From the CLI (approve --task) and from Telegram's button.
func TestServeGateAllowForTaskWithClaude(t *testing.T) {
	for _, from := range []string{"cli", "telegram"} {
		t.Run(from, func(t *testing.T) {
			const token = "gate-e2e-TOKEN"
			owner := telegramtest.Person{Chat: 42, User: 42}
			api := telegramtest.New(token)
			t.Cleanup(api.Close)
			g := newGateRig(t, "", []fakeapi.Iteration{twiceIteration},
				"TELEGRAM_BOT_TOKEN="+token, "TELEGRAM_ALLOWED_CHATS=42", "TELEGRAM_API_URL="+api.URL)
			v := g.c.WaitFor("db", "waiting for a decision", servetest.StateIs("waiting"))
			if v.Message != "waiting: approval a1 for Bash(echo run >> runs.txt)" {
				t.Fatalf("the task shows %q", v.Message)
			}
			if from == "cli" {
				g.c.OK("approve", "--task", "db", "a1")
			} else {
				m, ok := api.WaitSent(0, 60*time.Second, func(m telegramtest.Message) bool { return strings.Contains(m.Text, "asks to run") })
				if !ok || len(m.Buttons) != 3 || m.Buttons[1].Text != "☑️ Allow for this task" {
					t.Fatalf("no Allow for this task button: %+v", api.Sent())
				}
				api.Press(owner, m.MessageID, m.Buttons[1].Data)
			}
			v = g.c.WaitFor("db", "waiting for the other command", func(v serve.TaskView) bool {
				return v.State == "waiting" && strings.Contains(v.Message, "touch other")
			})
			if v.Message != "waiting: approval a2 for Bash(touch other)" {
				t.Fatalf("the identical command asked again, or the other did not ask: %q", v.Message)
			}
			if n := len(g.srv.MessageRequests()); n != 3 {
				t.Fatalf("%d model requests; want 3 (the second identical call ran unasked)", n)
			}
			runs, _ := os.ReadFile(filepath.Join(g.dir, "runs.txt"))
			if string(runs) != "run\nrun\n" {
				t.Fatalf("runs.txt is %q; the command ran not twice", runs)
			}
			g.c.OK("deny", "db", "a2")
			v = g.c.WaitFor("db", "done", servetest.StateIs("done"))
			if _, err := os.Stat(filepath.Join(g.dir, "other")); err == nil {
				t.Error("the other command ran although denied")
			}
			// The iteration's receipt records each decision: who, when,
			// what, from where.
			who := "by telegram:42"
			if from == "cli" {
				who = "by cli"
			}
			shown := g.c.OK("show", v.ID)
			for _, want := range []string{
				"decided: ", "Bash(echo run >> runs.txt) allowed for this task (a1) " + who,
				"Bash(echo run >> runs.txt) allowed (for this task, earlier)\n",
				"Bash(touch other) denied (a2) by cli",
			} {
				if !strings.Contains(shown, want) {
					t.Errorf("ralph task show lacks %q:\n%s", want, shown)
				}
			}
			var detail struct {
				Iterations []struct {
					Decisions []struct {
						At                                 time.Time
						Item, What, Outcome, Surface, User string
					}
				}
			}
			if err := json.Unmarshal([]byte(g.c.OK("show", v.ID, "--json")), &detail); err != nil {
				t.Fatal(err)
			}
			if len(detail.Iterations) != 1 || len(detail.Iterations[0].Decisions) != 3 {
				t.Fatalf("the receipt keeps %+v; want the three decisions", detail.Iterations)
			}
			d := detail.Iterations[0].Decisions[0]
			if d.At.IsZero() || d.Item != "a1" || d.Surface != from || (from == "telegram" && d.User != "42") {
				t.Errorf("the first decision is recorded as %+v", d)
			}
		})
	}
}

// twiceIteration runs one command twice, then another.
var twiceIteration = fakeapi.Iteration{Turns: []fakeapi.Turn{
	fakeapi.ToolTurn("First.", "Bash", map[string]string{"command": "echo run >> runs.txt", "description": "count"}),
	fakeapi.ToolTurn("Again.", "Bash", map[string]string{"command": "echo run >> runs.txt", "description": "count again"}),
	fakeapi.ToolTurn("Other.", "Bash", map[string]string{"command": "touch other", "description": "make a file"}),
	fakeapi.TextTurn("Done." + statusBlock("COMPLETE", true)),
}}

// Nobody answers within APPROVAL_TIMEOUT: the agent is told so as the
// tool's result, in the same call, and the task no longer shows the
// question; the status block's question (NEEDS_CLARIFICATION) is the
// durable wait from there on.
func TestServeGateAskTimeoutWithClaude(t *testing.T) {
	c, srv, _ := gateDaemon(t, "APPROVAL_TIMEOUT=3s\n")
	c.WaitFor("db", "waiting with the call's question", func(v serve.TaskView) bool { return v.State == "waiting" && len(v.Questions) > 0 })
	v := c.WaitFor("db", "done without an answer", servetest.StateIs("done"))
	reqs := srv.MessageRequests()
	if len(reqs) != 2 || toolResultText(t, reqs[1].Body) != gate.NoAnswer || v.LoopCount != 1 {
		t.Fatalf("%d requests, %d loops; the agent got %q", len(reqs), v.LoopCount, toolResultText(t, reqs[len(reqs)-1].Body))
	}
}

// gateDaemon runs the real daemon on one session whose Claude Code call
// asks "Which database?" with the gate's ask tool and then finishes with
// the answer it got; rc adds to the session's .ralphrc.
func gateDaemon(t *testing.T, rc string, extraEnv ...string) (servetest.Client, *fakeapi.Server, string) {
	var more []fakeapi.Iteration
	t.Helper()
	g := newGateRig(t, rc, append([]fakeapi.Iteration{askIteration}, more...), extraEnv...)
	return g.c, g.srv, g.home
}

// askIteration asks "Which database?" with the gate's ask tool and then
// finishes with the answer it got.
var askIteration = fakeapi.Iteration{Turns: []fakeapi.Turn{
	fakeapi.ToolTurn("I need to know.", gate.AskTool, map[string]any{"question": "Which database?", "options": []string{"sqlite", "postgres"}}),
	fakeapi.TextTurn("Using {{tool_result}}." + statusBlock("COMPLETE", true)),
}}

// bashIteration runs a command outside the allow-list and finishes with
// what the tool said.
var bashIteration = fakeapi.Iteration{Turns: []fakeapi.Turn{
	fakeapi.ToolTurn("Making it.", "Bash", map[string]string{"command": "touch made-by-bash", "description": "make a file"}),
	fakeapi.TextTurn("Bash said: {{tool_result}}" + statusBlock("COMPLETE", true)),
}}

// gateRig is gateDaemon's daemon, which a test can kill and start again.
type gateRig struct {
	c     servetest.Client
	srv   *fakeapi.Server
	home  string
	dir   string // the session's project
	proc  *servetest.Process
	serve func() *servetest.Process
}

// newGateRig starts the daemon on one session ("db") whose calls the fake
// model plays from its.
func newGateRig(t *testing.T, rc string, its []fakeapi.Iteration, extraEnv ...string) *gateRig {
	t.Helper()
	claude := agenttest.ClaudeBinary(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	dir := filepath.Join(work, "src")
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: its})
	addr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ralph := servetest.PlainRalph(t)
	env := append(agenttest.ClaudeEnv(t, srv.URL), servetest.Vars(home)...)
	env = append(env, "RALPH_CLAUDE_TIMEOUT_MINUTES=1", "RALPH_SERVER=http://"+addr)
	env = append(env, extraEnv...)
	files := map[string]string{".ralphrc": fmt.Sprintf("CLAUDE_CODE_CMD=%q\n", claude) + rc, "README.md": "# db\n"}
	if err := servetest.Repo(ralph, env, dir, files); err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
		}
	})
	serve := func() *servetest.Process {
		return servetest.Serve(t, &log, ralph, env, "--home", home, "--listen", addr, "--max-parallel", "1",
			"--session", "db="+dir, "--watch-interval", "0")
	}
	g := &gateRig{c: servetest.Client{T: t, Ralph: ralph, Env: env, Addr: addr}, srv: srv, home: home, dir: dir, proc: serve(), serve: serve}
	g.c.OK("start", "db", "Pick a database")
	g.c.OK("loop", "db", "3")
	return g
}

// decideBash approves or denies the Bash call of bashIteration, waiting as
// a1, and checks that the decision came back in the same call: the command
// ran, or the model read why not. It returns the finished task.
func (g *gateRig) decideBash(t *testing.T, allow bool) serve.TaskView {
	t.Helper()
	v := g.c.WaitFor("db", "waiting for a decision", servetest.StateIs("waiting"))
	if v.Message != "waiting: approval a1 for Bash(touch made-by-bash)" {
		t.Fatalf("the task shows %q", v.Message)
	}
	if allow {
		g.c.OK("approve", "db", "a1")
	} else {
		g.c.OK("deny", "db", "a1", "not", "on", "a", "Friday")
	}
	v = g.c.WaitFor("db", "done", servetest.StateIs("done"))
	reqs := g.srv.MessageRequests()
	if v.LoopCount != 1 || len(reqs) != 2 || reqs[1].Turn != 1 {
		t.Fatalf("%d loops, %d requests: the decision did not come back in the same call", v.LoopCount, len(reqs))
	}
	_, err := os.Stat(filepath.Join(g.dir, "made-by-bash"))
	result := toolResultText(t, reqs[1].Body)
	if allow && err != nil {
		t.Errorf("allowed, the command did not run: %v; the model got %q", err, result)
	}
	if !allow && (err == nil || !strings.Contains(result, "not on a Friday")) {
		t.Errorf("denied, the command ran (%v) or the model was not told: %q", err, result)
	}
	return v
}

// toolResultText is the text of the last tool_result a Messages API
// request carries.
func toolResultText(t *testing.T, body []byte) string {
	t.Helper()
	s, err := fakeapi.LastToolResultIn(body)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Two tool calls the model makes at once wait at once: the task lists both
// with their ids (the API's pending, `ralph task status` lines), its
// message names the newest; deciding one leaves the other listed.
func TestServeGateSeveralPendingWithClaude(t *testing.T) {
	g := newGateRig(t, "", []fakeapi.Iteration{twoAtOnceIteration})
	v := g.c.WaitFor("db", "two pending decisions", func(v serve.TaskView) bool { return len(v.Pending) == 2 })
	ids := []string{v.Pending[0].ID, v.Pending[1].ID}
	if ids[0] != "a1" || ids[1] != "a2" || v.Pending[0].Kind != "approval" || !strings.HasPrefix(v.Pending[0].What, "WebFetch") {
		t.Fatalf("pending %+v", v.Pending)
	}
	status := g.c.OK("status", "db")
	for _, want := range []string{"pending a1 approval: WebFetch", "pending a2 approval: WebFetch"} {
		if !strings.Contains(status, want) {
			t.Errorf("ralph task status lacks %q:\n%s", want, status)
		}
	}
	g.c.OK("deny", "db", "a2", "not", "now")
	v = g.c.WaitFor("db", "one pending decision", func(v serve.TaskView) bool { return len(v.Pending) == 1 })
	if v.Pending[0].ID != "a1" || v.State != "waiting" || !strings.HasPrefix(v.Message, "waiting: approval a1 for WebFetch") {
		t.Fatalf("after denying a2: %+v, %s, %q", v.Pending, v.State, v.Message)
	}
	g.c.OK("deny", "db", "a1", "not", "now")
	v = g.c.WaitFor("db", "done", servetest.StateIs("done"))
	if len(v.Pending) != 0 {
		t.Errorf("done, yet pending %+v", v.Pending)
	}
}

// twoAtOnceIteration makes two tool calls outside the allow-list in one
// turn; Claude Code runs read-only tools like WebFetch side by side.
var twoAtOnceIteration = fakeapi.Iteration{Turns: []fakeapi.Turn{
	{Text: "Fetching both.", ToolUses: []fakeapi.ToolUse{
		{Name: "WebFetch", Input: json.RawMessage(`{"url":"http://127.0.0.1:9/a","prompt":"a"}`)},
		{Name: "WebFetch", Input: json.RawMessage(`{"url":"http://127.0.0.1:9/b","prompt":"b"}`)},
	}},
	fakeapi.TextTurn("Got {{tool_result}}" + statusBlock("COMPLETE", true)),
}}
