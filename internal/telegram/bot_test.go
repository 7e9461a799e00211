package telegram

import (
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"ralph/internal/serve"
	"ralph/internal/telegram/telegramtest"
)

var (
	owner   = telegramtest.Person{Chat: 42, User: 42}
	teammat = telegramtest.Person{Chat: -100, User: 7}
	outside = telegramtest.Person{Chat: 99, User: 99}
)

// The verbs from a chat reach the fleet with the chat as the task's
// reply address; the replies are the task's state with the next step as
// a button, and the button acts.
func TestBotDrivesTheFleet(t *testing.T) {
	r := newRig(t, nil)
	r.api.Send(owner, "/ralph start 5 Build the auth module")
	m := r.said(0, "🆕 task created")
	if !strings.Contains(m.Text, "⏸ 5 · t1 waiting") || len(m.Buttons) != 1 || m.Buttons[0].Data != "loop10:t1:5" || m.ChatID != 42 {
		t.Errorf("start reply: %+v", m)
	}
	if c := r.fleet.Calls(); len(c) != 1 || c[0] != `start 5 "Build the auth module" telegram 42` {
		t.Errorf("fleet calls: %q", c)
	}
	n := len(r.api.Sent())
	r.api.Send(owner, "/ralph loop 5 20")
	m = r.said(n, "▶️ 5 · t1 running · loop 0/20")
	if len(m.Buttons) != 1 || m.Buttons[0].Data != "stop:t1:5" {
		t.Fatalf("loop reply: %+v", m)
	}
	// The stop button: answered, acted on, and no longer offered.
	n = len(r.api.Sent())
	_, qid := r.api.Press(owner, m.MessageID, m.Buttons[0].Data)
	r.said(n, "⏸ 5 · t1 waiting")
	edited, ok := r.api.WaitSent(n, 5*time.Second, func(x telegramtest.Message) bool { return x.Method == "editMessageText" })
	if !ok || edited.MessageID != m.MessageID || len(edited.Buttons) != 0 || !strings.HasSuffix(edited.Text, "→ stop") {
		t.Errorf("the pressed message: %+v %v", edited, ok)
	}
	if a := r.api.Answers(); len(a) != 1 || a[0].ID != qid {
		t.Errorf("callback answers: %+v", a)
	}
	// An old button of a task that is gone does nothing.
	r.fleet.set("5", func(v *serve.TaskView) { v.ID = "t9" })
	r.api.Press(owner, m.MessageID, "stop:t1:5")
	deadline := time.Now().Add(5 * time.Second)
	for len(r.api.Answers()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if a := r.api.Answers(); len(a) != 2 || !strings.Contains(a[1].Text, "no longer") {
		t.Errorf("a stale button: %+v", a)
	}
	if c := r.fleet.Calls(); strings.Count(strings.Join(c, ","), "stop 5") != 1 {
		t.Errorf("the stale button acted: %q", c)
	}

	// Groups: /ralph@name, replies quote the command; errors in the chat's
	// words; bad commands get their help line and the sessions.
	for _, c := range []struct {
		from telegramtest.Person
		text string
		want string
	}{
		{teammat, "/ralph@" + telegramtest.BotUsername + " status zz", `⚠️ unknown session "zz"; known sessions: a, b`},
		{owner, "/ralph loop a", "⚠️ session a has no task; start one (/ralph start a task…)"},
		{owner, "/ralph stop", "usage: /ralph stop N"},
		{owner, "/ralph cancel ../etc", "sessions: 5, a"},
		{owner, "/ralph launch 5", `unknown command "launch"`},
		{owner, "/ralph", "/watchdog status — what the watchdog watches"},
		{owner, "/watchdog status", "watches nothing"},
		{owner, "/ralph list", "5 · t9 waiting"},
		{owner, "/circuit 5", "⚡ 5 · breaker CLOSED"},
	} {
		n := len(r.api.Sent())
		id := r.api.Send(c.from, c.text)
		m := r.said(n, c.want)
		if c.from.Chat < 0 && m.ReplyTo == 0 {
			t.Errorf("%q in a group: the reply does not quote it (update %d)", c.text, id)
		}
	}
	// Another bot's command and plain talk get nothing.
	n = len(r.api.Sent())
	r.api.Send(teammat, "/ralph@other_bot list")
	r.api.Send(owner, "thanks!")
	r.api.Send(owner, "/ralph list")
	r.said(n, "5 · t9")
	if got := len(r.api.Sent()); got != n+1 {
		t.Errorf("%d replies to one command and two messages not for the bot", got-n)
	}
	if strings.Contains(r.log.String(), testToken) {
		t.Error("the token is in the log")
	}
}

// Only the allow-list acts; a stranger's command does nothing, gets no
// reply, and its text is not logged.
func TestBotIgnoresStrangers(t *testing.T) {
	r := newRig(t, func(c *Config) { c.AllowedUsers = []int64{42} })
	r.api.Send(outside, "/ralph start 5 exfiltrate-the-secrets")
	r.api.Send(teammat, "/ralph start 5 an allowed chat, not an allowed person")
	r.api.Press(outside, 1, "stop:t1:5")
	r.api.Send(owner, "/ralph list")
	r.said(0, "No tasks yet")
	if c := r.fleet.Calls(); len(c) != 0 {
		t.Errorf("a stranger reached the fleet: %q", c)
	}
	if n := len(r.api.Sent()); n != 1 {
		t.Errorf("%d messages sent, want the one reply to the owner", n)
	}
	log := r.log.String()
	if !strings.Contains(log, "ignored a message from chat 99 (user 99)") || !strings.Contains(log, "ignored a message from chat -100 (user 7)") {
		t.Errorf("the strangers are not logged:\n%s", log)
	}
	if strings.Contains(log, "exfiltrate") || strings.Contains(log, "not an allowed person") {
		t.Errorf("a stranger's text is in the log:\n%s", log)
	}
}

// A question is a message to reply to; the reply answers the task, also
// after a restart; a reply to anything else, or to an old task's
// question, does not.
func TestBotQuestionAnsweredByReply(t *testing.T) {
	r := newRig(t, nil)
	r.api.Send(owner, "/ralph start 5 Store things")
	r.said(0, "🆕")
	r.fleet.set("5", func(v *serve.TaskView) {
		v.Questions, v.ExitReason = []string{"PostgreSQL or SQLite?"}, "needs_clarification"
	})
	r.bot.Notify(serve.Notice{Kind: serve.NoticeQuestion, Session: "5", TaskID: "t1", Title: "Store things", Origin: "telegram", ReplyTo: "42",
		Questions: []string{"PostgreSQL or SQLite?"}})
	q := r.said(0, "❓ 5 · t1 asks:")
	if !q.ForceReply || q.ChatID != 42 || !strings.Contains(q.Text, "• PostgreSQL or SQLite?") {
		t.Fatalf("question: %+v", q)
	}

	// A restart in between: the reply still finds its task, and updates
	// handled before are not handled again.
	r.restart(Config{Token: testToken, AllowedChats: []int64{42, -100}, APIURL: r.api.URL})
	r.api.Unconfirm()
	n := len(r.api.Sent())
	r.api.Reply(owner, q.MessageID, "SQLite, it is one file.")
	m := r.said(n, "✍️ answer recorded")
	if !strings.Contains(m.Text, "5 · t1 queued") {
		t.Errorf("answer reply: %+v", m)
	}
	calls := r.fleet.Calls()
	if !slices.Contains(calls, "answer SQLite, it is one file. to 5") || strings.Count(strings.Join(calls, "\n"), "start 5") != 1 {
		t.Errorf("fleet calls: %q", calls)
	}
	// Answered: a second reply says so; a reply to another message is
	// not an answer.
	n = len(r.api.Sent())
	r.api.Reply(owner, q.MessageID, "Or PostgreSQL?")
	r.said(n, "has no open question")
	r.api.Reply(owner, m.MessageID, "nice")
	r.api.Send(owner, "/ralph status 5")
	r.said(n+1, "5 · t1 queued")
	if got := len(r.api.Sent()); got != n+2 {
		t.Errorf("a reply to a status message was taken as something: %+v", r.api.Sent()[n:])
	}
}

// Notices go to the chat that started the task, CLI tasks to the first
// allowed chat; a repeated usage-limit wait is told once; halted and
// stopped offer their next step.
func TestBotNotices(t *testing.T) {
	r := newRig(t, nil)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	r.bot.Notify(serve.Notice{Kind: serve.NoticeDone, Session: "a", TaskID: "t1", Title: "From the CLI", Origin: "cli", Reason: "plan_complete", Summary: "all wired"})
	r.bot.Notify(serve.Notice{Kind: serve.NoticeHalted, Session: "5", TaskID: "t2", Title: "From the team", Origin: "telegram", ReplyTo: "-100",
		Reason: "circuit_breaker_open", Message: "circuit_breaker_open: no progress"})
	for range 2 {
		r.bot.Notify(serve.Notice{Kind: serve.NoticeUsageLimit, Session: "5", TaskID: "t2", Origin: "telegram", ReplyTo: "-100", Until: until, Message: "5-hour limit"})
	}
	r.bot.Notify(serve.Notice{Kind: serve.NoticeStopped, Session: "5", TaskID: "t2", Origin: "telegram", ReplyTo: "-100:77", Message: "max_loops: reached"})
	r.bot.Notify(serve.Notice{Kind: serve.NoticeDone, Session: "5", TaskID: "t3", Origin: "telegram", ReplyTo: "555"})

	done := r.said(0, "✅ a · t1 done (plan_complete)")
	halted := r.said(0, "⛔ 5 · t2 halted")
	stopped := r.said(0, "⏸ 5 · t2 stopped")
	if done.ChatID != 42 || halted.ChatID != -100 || stopped.ChatID != -100 || stopped.ThreadID != 77 {
		t.Errorf("targets: done %d, halted %d, stopped %d/%d", done.ChatID, halted.ChatID, stopped.ChatID, stopped.ThreadID)
	}
	if len(halted.Buttons) != 1 || halted.Buttons[0].Data != "reset:t2:5" || len(stopped.Buttons) != 1 || stopped.Buttons[0].Data != "loop10:t2:5" {
		t.Errorf("buttons: %+v %+v", halted.Buttons, stopped.Buttons)
	}
	limits := 0
	for _, m := range r.api.Sent() {
		if strings.Contains(m.Text, "usage limit") {
			limits++
		}
		if m.ChatID == 555 {
			t.Errorf("a notice went to a chat that is not allowed: %+v", m)
		}
	}
	if limits != 1 {
		t.Errorf("%d usage-limit messages for one wait", limits)
	}
	if !strings.Contains(r.log.String(), "its chat 555 is no longer allowed") {
		t.Errorf("log:\n%s", r.log.String())
	}
}

// 500s and 429s are retried — a 429 after the time it asks for — and
// the message arrives.
func TestBotRetries(t *testing.T) {
	r := newRig(t, nil)
	r.api.Send(owner, "/ralph list")
	r.said(0, "No tasks yet")
	r.api.FailNext("sendMessage", 2, http.StatusInternalServerError, 0)
	r.api.FailNext("sendMessage", 1, http.StatusTooManyRequests, 7)
	r.api.Send(owner, "/ralph status")
	r.said(1, "No tasks yet")
	var sleeps []time.Duration
	for _, d := range *r.sleeps {
		if d != 0 {
			sleeps = append(sleeps, d)
		}
	}
	if len(sleeps) < 3 || sleeps[len(sleeps)-3] != time.Second || sleeps[len(sleeps)-2] != 2*time.Second || sleeps[len(sleeps)-1] != 7*time.Second {
		t.Errorf("back-off: %v", sleeps)
	}
	// A refusal is not retried.
	calls := r.api.Calls("sendMessage")
	r.bot.Notify(serve.Notice{Kind: serve.NoticeDone, Session: "a", TaskID: "t1", Origin: "telegram", ReplyTo: "42"})
	r.said(0, "a · t1 done")
	r.api.FailNext("sendMessage", 1, http.StatusForbidden, 0)
	r.bot.Notify(serve.Notice{Kind: serve.NoticeDone, Session: "a", TaskID: "t2", Origin: "telegram", ReplyTo: "42"})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(r.log.String(), "was not delivered") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := r.api.Calls("sendMessage") - calls; got != 2 {
		t.Errorf("%d sendMessage calls for two notices, one refused", got)
	}
}

// The webhook takes updates only with the secret, handles each once, and
// the bot registers it at start (and never polls).
func TestBotWebhook(t *testing.T) {
	const secret = "hook-secret_1"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hookURL := "http://" + ln.Addr().String() + WebhookPath
	var current atomic.Pointer[Bot]
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+WebhookPath, func(w http.ResponseWriter, req *http.Request) {
		if b := current.Load(); b != nil {
			b.Routes()["POST "+WebhookPath].ServeHTTP(w, req)
			return
		}
		http.Error(w, "not yet", http.StatusServiceUnavailable)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r := newRig(t, func(c *Config) { c.WebhookSecret, c.WebhookURL = secret, hookURL })
	current.Store(r.bot)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if u, _ := r.api.Webhook(); u != "" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if u, s := r.api.Webhook(); u != hookURL || s != secret {
		t.Fatalf("webhook set: %q %q", u, s)
	}
	id := r.api.Send(owner, "/ralph start 5 Through the hook")
	r.said(0, "🆕 task created")
	r.api.Redeliver(id)
	r.api.Send(owner, "/ralph list")
	r.said(1, "5 · t1 waiting")
	if c := r.fleet.Calls(); len(c) != 1 {
		t.Errorf("a redelivered update was handled twice: %q", c)
	}
	for _, s := range []string{"", "wrong", secret + "x"} {
		req, _ := http.NewRequest("POST", hookURL, strings.NewReader(`{"update_id":999999,"message":{"message_id":1,"date":1,"chat":{"id":42,"type":"private"},"from":{"id":42,"is_bot":false,"first_name":"x"},"text":"/ralph cancel 5"}}`))
		if s != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", s)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("secret %q: %s", s, resp.Status)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if c := r.fleet.Calls(); len(c) != 1 {
		t.Errorf("a forged update acted: %q", c)
	}
	if n := r.api.Calls("getUpdates"); n != 0 {
		t.Errorf("%d getUpdates in webhook mode", n)
	}
}

// A reply can come before the bot has remembered that the message it
// answers asked a question (the id is stored once the send returns): it
// waits for that and answers, instead of being dropped.
func TestBotReplyBeforeTheQuestionIsRemembered(t *testing.T) {
	r := askingRig(t)
	n := len(r.api.Sent())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.bot.awaitQuestion(target{chat: 42, who: "@owner"}, 42, 777, "", "SQLite.")
	}()
	if err := r.bot.store.addQuestion(42, 777, "t1", "5", time.Now()); err != nil {
		t.Fatal(err)
	}
	r.bot.noteAsked()
	r.said(n, "✍️ answer recorded")
	<-done
	if calls := r.fleet.Calls(); !slices.Contains(calls, "answer SQLite. to 5") {
		t.Errorf("fleet calls: %q", calls)
	}
}

// A question whose record was lost (the daemon killed between the send
// and the record) is still answered by a reply: the bot's own message
// names its task.
func TestBotReplyToAnUnrecordedQuestion(t *testing.T) {
	r := askingRig(t)
	n := len(r.api.Sent())
	r.bot.awaitQuestion(target{chat: 42, who: "@owner"}, 42, 888, "❓ 5 · t1 asks:\nStore things\n• PostgreSQL or SQLite?", "SQLite.")
	r.said(n, "✍️ answer recorded")
	for text, want := range map[string]bool{"❓ 5 · t1 asks:\nx": true, "❓ my-app · t12 asks:": true, "✅ 5 · t1 done": false, "5 · t1 asks:": false} {
		if _, _, ok := askedBy(text); ok != want {
			t.Errorf("askedBy(%q) = %v", text, ok)
		}
	}
}

// askingRig is a rig whose session 5 has a task waiting on a question.
func askingRig(t *testing.T) *rig {
	t.Helper()
	r := newRig(t, nil)
	r.api.Send(owner, "/ralph start 5 Store things")
	r.said(0, "🆕")
	r.fleet.set("5", func(v *serve.TaskView) {
		v.Questions, v.ExitReason = []string{"PostgreSQL or SQLite?"}, "needs_clarification"
	})
	return r
}
