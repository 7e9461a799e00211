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
func TestServeGateAskSurvivesRestartWithClaude(t *testing.T) {
	g := newGateRig(t, "", []fakeapi.Iteration{{Turns: []fakeapi.Turn{fakeapi.TextTurn("Going on." + statusBlock("COMPLETE", true))}}})
	g.c.WaitFor("db", "waiting with the call's question", func(v serve.TaskView) bool { return v.State == "waiting" && len(v.Questions) > 0 })
	g.proc.Kill()
	g.proc = g.serve()
	if v := g.c.Status("db"); v.State != "waiting" || len(v.Questions) == 0 || v.Questions[0] != "Which database?" {
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
	if p := last.Messages.Prompts(); len(p) == 0 || !strings.Contains(p[len(p)-1], "postgres") {
		t.Errorf("the next call's prompt lacks the answer: %q", p)
	}
}

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
	t.Helper()
	g := newGateRig(t, rc, nil, extraEnv...)
	return g.c, g.srv, g.home
}

// gateRig is gateDaemon's daemon, which a test can kill and start again.
type gateRig struct {
	c     servetest.Client
	srv   *fakeapi.Server
	home  string
	proc  *servetest.Process
	serve func() *servetest.Process
}

// newGateRig starts the daemon; more are the fake model's iterations after
// the asking one.
func newGateRig(t *testing.T, rc string, more []fakeapi.Iteration, extraEnv ...string) *gateRig {
	t.Helper()
	claude := agenttest.ClaudeBinary(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	dir := filepath.Join(work, "src")
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: append([]fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("I need to know.", gate.AskTool, map[string]any{"question": "Which database?", "options": []string{"sqlite", "postgres"}}),
		fakeapi.TextTurn("Using {{tool_result}}." + statusBlock("COMPLETE", true)),
	}}}, more...)})
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
	g := &gateRig{c: servetest.Client{T: t, Ralph: ralph, Env: env, Addr: addr}, srv: srv, home: home, proc: serve(), serve: serve}
	g.c.OK("start", "db", "Pick a database")
	g.c.OK("loop", "db", "3")
	return g
}

// toolResultText is the text of the last tool_result a Messages API
// request carries.
func toolResultText(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out string
	for _, m := range req.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			var s string
			if json.Unmarshal(b.Content, &s) == nil {
				out = s
				continue
			}
			var parts []struct{ Text string }
			_ = json.Unmarshal(b.Content, &parts)
			out = ""
			for _, p := range parts {
				out += p.Text
			}
		}
	}
	return out
}
