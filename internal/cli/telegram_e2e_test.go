package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
	"ralph/internal/telegram/telegramtest"
)

const tgToken = "987654:telegram-e2e-TOKEN-value_x"

var (
	tgOwner    = telegramtest.Person{Chat: 42, User: 42}
	tgTeam     = telegramtest.Person{Chat: -100, User: 7}
	tgStranger = telegramtest.Person{Chat: 666, User: 666}
)

// telegramRig is a fleet rig whose daemon talks to a fake Bot API.
func telegramRig(t *testing.T, extraEnv ...string) (*servetest.Daemon, *telegramtest.Server) {
	t.Helper()
	r := servetest.New(t, servetest.Options{})
	api := telegramtest.New(tgToken)
	t.Cleanup(api.Close)
	r.Env = append(r.Env, "TELEGRAM_BOT_TOKEN="+tgToken, "TELEGRAM_ALLOWED_CHATS=42,-100", "TELEGRAM_API_URL="+api.URL)
	r.Env = append(r.Env, extraEnv...)
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range api.Sent() {
				t.Logf("bot → %d: %q %v", m.ChatID, m.Text, m.Buttons)
			}
		}
	})
	return r, api
}

// said waits for a message of the bot after skip that contains sub.
func said(t *testing.T, api *telegramtest.Server, skip int, sub string) telegramtest.Message {
	t.Helper()
	m, ok := api.WaitSent(skip, 60*time.Second, func(m telegramtest.Message) bool { return strings.Contains(m.Text, sub) })
	if !ok {
		t.Fatalf("the bot never said %q", sub)
	}
	return m
}

// ask is an agent that wants to ask with Claude Code's question tool,
// which -p mode refuses: the refusal is in the result's
// permission_denials.
func ask(session string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"session_id":%q,`+
		`"result":"I need to know which database to use before I go on.",`+
		`"permission_denials":[{"tool_name":"AskUserQuestion","tool_use_id":"toolu_1","tool_input":{"questions":[`+
		`{"question":"Which database should I use?","header":"Database","multiSelect":false,"options":[{"label":"PostgreSQL","description":"a server"},{"label":"SQLite","description":"a file"}]}]}}]}`, session))
}

// Every chat command against the real daemon: a task started from the
// chat asks a question with AskUserQuestion, is answered by a reply and
// finishes in the same agent session, and the chat hears of it; a
// stranger's command does nothing and is not logged; the token shows
// nowhere.
func TestTelegramEndToEnd(t *testing.T) {
	r, api := telegramRig(t)
	_, script5 := r.Session("5", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{ask("sess-5")}},
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-5", "Used SQLite, all done."+servetest.CompleteStatus)}},
	}})
	r.Session("a", script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{Files: map[string]string{"slow.txt": "{{call}}\n"}, Sleep: script.Duration(700 * time.Millisecond),
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a", "Slowly."+servetest.RalphStatus("IN_PROGRESS", false, 3))}},
	}})
	r.Start(2)

	// A stranger first: nothing happens, nothing of its text is logged.
	api.Send(tgStranger, "/ralph start 5 stranger-wants-this-title")
	api.Send(tgOwner, "/ralph start 5 Pick a database")
	start := said(t, api, 0, "🆕 task created")
	if start.ChatID != 42 || !strings.Contains(start.Text, "5 · t1 waiting") || !strings.Contains(start.Text, "Pick a database") {
		t.Fatalf("start reply: %+v", start)
	}
	if v := r.Status("5"); v.Origin != "telegram" || v.Title != "Pick a database" {
		t.Errorf("the task: %+v", v)
	}

	// Loop: the agent asks; the question comes as a message to reply to.
	n := len(api.Sent())
	api.Send(tgOwner, "/ralph loop 5 10")
	said(t, api, n, "5 · t1")
	q := said(t, api, n, "❓ 5 · t1 asks:")
	if !q.ForceReply || q.ChatID != 42 || !strings.Contains(q.Text, "Which database should I use? (PostgreSQL / SQLite)") {
		t.Fatalf("question: %+v", q)
	}
	if v := r.Status("5"); v.State != "waiting" || v.ExitReason != "needs_clarification" || len(v.Questions) != 1 {
		t.Errorf("after the question: %+v", v)
	}
	// The reply answers it; the loop resumes in the same agent session and
	// the task finishes; the chat hears it.
	n = len(api.Sent())
	api.Reply(tgOwner, q.MessageID, "SQLite, please.")
	said(t, api, n, "✍️ answer recorded")
	done := said(t, api, n, "✅ 5 · t1 done")
	if done.ChatID != 42 || !strings.Contains(done.Text, "last: ") {
		t.Errorf("done notice: %+v", done)
	}
	v := r.WaitFor("5", "done", servetest.StateIs("done"))
	if !strings.Contains(readFile(t, v.TaskFile), "A: SQLite, please.") {
		t.Errorf("the answer is not in the task file:\n%s", readFile(t, v.TaskFile))
	}
	calls := strings.Split(strings.TrimSpace(readFile(t, script.ArgvLog(script5))), "\n")
	var second script.Call
	if len(calls) != 2 || json.Unmarshal([]byte(calls[1]), &second) != nil || !slices.Contains(second.Args, "sess-5") {
		t.Errorf("the answered call did not resume sess-5:\n%s", strings.Join(calls, "\n"))
	}

	// Every other command, in a group too (addressed to the bot).
	api.Send(tgOwner, "/ralph start a Slow work")
	said(t, api, 0, "a · t2 waiting")
	for _, c := range []struct {
		from telegramtest.Person
		text string
		want string
	}{
		{tgOwner, "/ralph loop a 50", "a · t2 running · loop 0/50"},
		{tgOwner, "/ralph status a", "a · t2 running"},
		{tgTeam, "/ralph@" + telegramtest.BotUsername + " list", "✅ 5 · t1 done · loop 2/10 — Pick a database"},
		{tgOwner, "/ralph status", "a · t2 running"},
		{tgOwner, "/circuit 5", "⚡ 5 · breaker CLOSED"},
		{tgOwner, "/watchdog status", "👁"},
		{tgOwner, "/ralph", "/ralph start N [--loop M] task…"},
		{tgOwner, "/ralph pause a", "⏸ paused: the loop holds before its next iteration."},
		{tgOwner, "/ralph resume a", "▶️ resumed."},
		{tgOwner, "/ralph deploy 5", `unknown command "deploy"`},
		{tgOwner, "/ralph loop 5 lots", "usage: /ralph loop N [max]"},
		{tgOwner, "/ralph status zz", `unknown session "zz"; known sessions: 5, a`},
		{tgOwner, "/ralph loop 5", "session 5 has no task; start one (/ralph start 5 task…)"},
		{tgOwner, "/ralph stop a", "⏹ stopping after the current iteration"},
	} {
		n := len(api.Sent())
		api.Send(c.from, c.text)
		said(t, api, n, c.want)
	}
	stopped := said(t, api, 0, "⏸ a · t2 stopped — interrupted")
	if len(stopped.Buttons) != 1 || stopped.Buttons[0].Data != "loop10:t2:a" {
		t.Errorf("stopped notice: %+v", stopped)
	}
	// Its button loops 10 more; then reset and cancel.
	n = len(api.Sent())
	api.Press(tgOwner, stopped.MessageID, stopped.Buttons[0].Data)
	said(t, api, n, "▶️ a · t2 running")
	if v := r.Status("a"); v.State != "running" || v.MaxLoops-v.LoopCount < 8 || v.MaxLoops-v.LoopCount > 10 {
		t.Errorf("after the button: %s %d/%d", v.State, v.LoopCount, v.MaxLoops)
	}
	// What the chat did is recorded as the chat's, with who did it.
	if v := r.Status("a"); len(v.Commands) == 0 || !strings.HasPrefix(v.Commands[len(v.Commands)-1].By, "telegram:") {
		t.Errorf("the chat's commands were recorded as %+v", v.Commands)
	}
	for _, c := range []struct{ text, want string }{
		{"/ralph reset a", "🔁 circuit breaker reset"},
		{"/ralph cancel a", "✖️ a · t2 cancelled"},
	} {
		n := len(api.Sent())
		api.Send(tgOwner, c.text)
		said(t, api, n, c.want)
	}

	// The stranger did nothing: one task on 5, never a word to chat 666.
	for _, m := range api.Sent() {
		if m.ChatID == 666 {
			t.Errorf("the bot answered a stranger: %+v", m)
		}
	}
	log := r.Log.String()
	if !strings.Contains(log, "ignored a message from chat 666") || strings.Contains(log, "stranger-wants-this-title") {
		t.Errorf("the stranger in the log:\n%s", log)
	}
	// The token: not in the log, not in the API.
	apiToken := strings.TrimSpace(readFile(t, filepath.Join(r.Home, "api-token")))
	for _, path := range []string{"/api/tasks", "/api/tasks/5", "/api/sessions"} {
		if _, body := r.API("GET", path, apiToken, ""); strings.Contains(body, tgToken) || strings.Contains(body, "telegram-e2e-TOKEN") {
			t.Errorf("%s shows the bot token", path)
		}
	}
	if strings.Contains(log, "telegram-e2e-TOKEN") || !strings.Contains(log, "telegram: connected as @"+telegramtest.BotUsername) {
		t.Errorf("the daemon log:\n%s", log)
	}
}

// A restart never replays what the bot handled, even if Telegram offers
// it again; a question asked before the restart is answered after it.
func TestTelegramRestartNoReplay(t *testing.T) {
	r, api := telegramRig(t)
	r.Session("5", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-5", "Stuck."+servetest.Question("Keep the old API?"))}},
		{Files: map[string]string{"api.txt": "kept\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-5", "Kept it, done."+servetest.CompleteStatus)}},
	}})
	r.Start(1)
	api.Send(tgOwner, "/ralph start 5 Once only")
	said(t, api, 0, "🆕")
	api.Send(tgOwner, "/ralph loop 5")
	q := said(t, api, 0, "❓ 5 · t1 asks:")
	r.Kill()
	// As if the bot had died before confirming: Telegram offers it all
	// again.
	api.Unconfirm()
	r.Start(1)
	n := len(api.Sent())
	api.Reply(tgOwner, q.MessageID, "Yes, keep it.")
	said(t, api, n, "✍️ answer recorded")
	said(t, api, n, "✅ 5 · t1 done")
	api.Send(tgOwner, "/ralph list")
	said(t, api, n, "✅ 5 · t1 done")
	var created, refused int
	for _, m := range api.Sent() {
		if strings.Contains(m.Text, "🆕") {
			created++
		}
		if strings.Contains(m.Text, "busy") || strings.Contains(m.Text, "already") || strings.Contains(m.Text, "waiting for an answer") {
			refused++
		}
	}
	if created != 1 || refused != 0 {
		t.Errorf("replayed after the restart: %d created, %d refused", created, refused)
	}
	if v := r.Status("5"); v.ID != "t1" {
		t.Errorf("a second task: %+v", v)
	}
}

// The Bot API failing — 500s, 429s with retry_after, then every call for
// a while — delays the chat and nothing else: loops run on, the daemon
// lives, and the chat works again once Telegram does.
func TestTelegramBotAPIErrors(t *testing.T) {
	r, api := telegramRig(t)
	r.Session("5", script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{Files: map[string]string{"work.txt": "{{call}}\n"}, StdoutLines: []json.RawMessage{servetest.ResultLine("sess-5", "Worked."+servetest.RalphStatus("IN_PROGRESS", false, 3))}},
	}})
	api.FailNext("getUpdates", 3, http.StatusInternalServerError, 0)
	api.FailNext("getUpdates", 2, http.StatusTooManyRequests, 1)
	r.Start(1)
	api.FailNext("sendMessage", 1, http.StatusTooManyRequests, 1)
	api.FailNext("sendMessage", 1, http.StatusBadGateway, 0)
	api.Send(tgOwner, "/ralph start 5 Through the storm")
	said(t, api, 0, "🆕")
	// Now Telegram fails everything; the loop, driven from the CLI, runs.
	api.FailNext("", 100000, http.StatusInternalServerError, 0)
	r.OK("loop", "5", "3")
	if v := r.WaitFor("5", "its loops done", servetest.StateIs("waiting")); v.LoopCount != 3 || v.ExitReason != "max_loops" {
		t.Errorf("the loop under a failing Telegram: %+v", v)
	}
	api.Heal()
	n := len(api.Sent())
	api.Send(tgOwner, "/ralph status 5")
	said(t, api, n, "5 · t1 waiting · loop 3/3")
	if log := r.Log.String(); !strings.Contains(log, "telegram: polling: ") || !strings.Contains(log, "telegram: sendMessage: too many requests") ||
		strings.Contains(log, "telegram-e2e-TOKEN") {
		t.Errorf("daemon log:\n%s", log)
	}
}

// Webhook mode: the daemon registers its route with the secret, Telegram's
// posts reach it, and a post without the secret is refused.
func TestTelegramWebhook(t *testing.T) {
	r, api := telegramRig(t)
	hook := "http://" + r.Addr + "/webhooks/telegram"
	r.Env = append(r.Env, "TELEGRAM_WEBHOOK_SECRET=hook_secret-1", "TELEGRAM_WEBHOOK_URL="+hook)
	r.Session("5", script.Script{Iterations: []script.Iteration{{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-5", "x")}}}})
	r.Start(1)
	deadline := time.Now().Add(30 * time.Second)
	for u, _ := api.Webhook(); u == "" && time.Now().Before(deadline); u, _ = api.Webhook() {
		time.Sleep(50 * time.Millisecond)
	}
	if u, s := api.Webhook(); u != hook || s != "hook_secret-1" {
		t.Fatalf("webhook: %q %q", u, s)
	}
	api.Send(tgOwner, "/ralph start 5 By hook")
	said(t, api, 0, "🆕 task created")
	code, _ := r.API("POST", "/webhooks/telegram", "", `{"update_id":5,"message":{"message_id":1,"date":1,"chat":{"id":42,"type":"private"},"from":{"id":42,"is_bot":false,"first_name":"x"},"text":"/ralph cancel 5"}}`)
	if code != http.StatusUnauthorized {
		t.Errorf("a post without the secret: %d", code)
	}
	if v := r.Status("5"); v.State != "waiting" {
		t.Errorf("the forged cancel acted: %s", v.State)
	}
	if api.Calls("getUpdates") != 0 {
		t.Error("the daemon polls in webhook mode")
	}
	if strings.Contains(r.Log.String(), "hook_secret-1") {
		t.Error("the webhook secret is in the log")
	}
}

// A token without an allow-list stops the daemon, saying why, and
// without the token.
func TestTelegramRequiresAnAllowList(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	cmd := exec.Command(r.Ralph, "serve", "--home", r.Home, "--listen", r.Addr)
	cmd.Env = append(r.Env, "TELEGRAM_BOT_TOKEN="+tgToken, "TELEGRAM_ALLOWED_CHATS=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "TELEGRAM_ALLOWED_CHATS is not") {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(string(out), "telegram-e2e-TOKEN") {
		t.Errorf("the token in the output: %s", out)
	}
}
