package requests

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/requests/slacktest"
	"ralph/internal/serve"
)

// gateDaemon is a daemon whose task waits on pending items: Do records
// each command and takes a decided item off the list, as serve does.
type gateDaemon struct {
	mu  sync.Mutex
	v   serve.TaskView
	did []fleet.Command
}

func (d *gateDaemon) AddSession(serve.Session) error           { return nil }
func (d *gateDaemon) SetPRURL(string, string, bool) error      { return nil }
func (d *gateDaemon) Follow(string, fleet.State, string) error { return nil }
func (d *gateDaemon) Status(string) (serve.TaskView, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.v, nil
}
func (d *gateDaemon) commands() []fleet.Command {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.did)
}
func (d *gateDaemon) Do(_ context.Context, c fleet.Command) (serve.TaskView, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.IndexFunc(d.v.Pending, func(it serve.PendingItem) bool {
		return it.ID == c.Item || c.Verb == fleet.Answer && it.Kind == "question"
	})
	if i < 0 {
		return d.v, &fleet.Error{Code: fleet.Conflict, Msg: "session s waits for no decision " + strconv.Quote(c.Item)}
	}
	d.did = append(d.did, c)
	d.v.Pending = slices.Delete(d.v.Pending, i, i+1)
	return d.v, nil
}

var waitingView = serve.TaskView{ID: "t7", Session: "slack-callow-1000100", State: fleet.Waiting, Pending: []serve.PendingItem{
	{ID: "a1", Kind: "approval", What: "Bash(npm publish)"},
	{ID: "q2", Kind: "question", What: "Which database?", Options: []string{"sqlite", "postgres"}},
}}

// slackGateRig is the requests service on the fake Slack, with a request
// whose task waits on waitingView's items, posted in its thread.
func slackGateRig(t *testing.T) (*Service, *slacktest.Server, *gateDaemon, Request) {
	s, fs := newSlackService(t)
	s.cfg.Slack.Users = []string{"UALICE"}
	d := &gateDaemon{v: waitingView}
	d.v.Pending = slices.Clone(waitingView.Pending)
	s.d = d
	r := Request{Key: "slack:CALLOW/1.000100", Source: "slack", Repo: "acme/app", Channel: "CALLOW", Thread: "1.000100",
		Title: "x", Author: "UALICE", Session: waitingView.Session, Branch: "ralph/x", CreatedAt: time.Now()}
	if _, err := s.store.Create(r, Entry{ID: "opening", Author: "UALICE", Body: "x", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.gateSync(context.Background(), r, d.v); err != nil {
		t.Fatal(err)
	}
	return s, fs, d, r
}

func pressButton(s *Service, payload []byte, at time.Time, secret string) int {
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	req := httptest.NewRequest("POST", SlackInteractivePath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("X-Slack-Signature", slacktest.Sign(secret, at, body))
	w := httptest.NewRecorder()
	s.Routes()[SlackInteractivePath].ServeHTTP(w, req)
	return w.Code
}

// Each pending item is posted once in the thread: a tool call with Allow
// once, Allow for this task and Deny, a question with its options, each
// button naming the task and the item.
func TestSlackGatePostsButtons(t *testing.T) {
	s, fs, d, r := slackGateRig(t)
	if err := s.gateSync(context.Background(), r, d.v); err != nil { // again: nothing new
		t.Fatal(err)
	}
	msgs := fs.Messages("CALLOW")
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want one per item: %+v", len(msgs), msgs)
	}
	a, q := msgs[0], msgs[1]
	if a.ThreadTS != "1.000100" || !strings.Contains(a.Text, "Bash(npm publish)") || !strings.Contains(a.BlockText, "`Bash(npm publish)`") {
		t.Errorf("approval message %+v", a)
	}
	btn := func(action, text string) slacktest.Button {
		return slacktest.Button{ActionID: action, BlockID: "ralph_gate_a1", Value: "t7|a1", Text: text}
	}
	want := []slacktest.Button{btn(actionAllow, "✅ Allow once"), btn(actionAllowTask, "☑️ Allow for this task"), btn(actionDeny, "⛔ Deny")}
	if !slices.Equal(a.Buttons, want) {
		t.Errorf("approval buttons %+v", a.Buttons)
	}
	if len(q.Buttons) != 2 || q.Buttons[0].Text != "sqlite" || q.Buttons[1].Value != "t7|q2|1" || !strings.Contains(q.BlockText, "\n>Which database?") {
		t.Errorf("question message %+v", q)
	}
}

// A press must be Slack's: unsigned, forged or stale deliveries get 401
// and decide nothing; a stranger's press decides nothing and is told so,
// to them alone; the allowed user's Allow once goes through the one
// command path with who pressed, and the message then says who decided
// what, its buttons gone.
func TestSlackGatePress(t *testing.T) {
	s, fs, d, _ := slackGateRig(t)
	a := fs.Messages("CALLOW")[0]
	allow := slacktest.Interaction(a, a.Buttons[0], "UALICE")
	for name, code := range map[string]int{
		"forged": pressButton(s, allow, time.Now(), "wrong-secret"),
		"stale":  pressButton(s, allow, time.Now().Add(-10*time.Minute), "slack-secret"),
	} {
		if code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	unsigned := httptest.NewRequest("POST", SlackInteractivePath, strings.NewReader("payload="+url.QueryEscape(string(allow))))
	w := httptest.NewRecorder()
	s.Routes()[SlackInteractivePath].ServeHTTP(w, unsigned)
	if w.Code != http.StatusUnauthorized {
		t.Errorf("unsigned: %d, want 401", w.Code)
	}
	if code := pressButton(s, slacktest.Interaction(a, a.Buttons[0], "UMALLORY"), time.Now(), "slack-secret"); code != http.StatusOK {
		t.Errorf("a stranger's press: %d", code)
	}
	if len(d.commands()) != 0 {
		t.Fatalf("decided without a good press: %+v", d.commands())
	}
	if e := fs.Ephemerals(); len(e) != 1 || e[0].User != "UMALLORY" || e[0].ThreadTS != "1.000100" || !strings.Contains(e[0].Text, "nothing was done") {
		t.Errorf("the stranger was not told: %+v", e)
	}
	if code := pressButton(s, allow, time.Now(), "slack-secret"); code != http.StatusOK {
		t.Fatalf("press: %d", code)
	}
	want := fleet.Command{Verb: fleet.Approve, Session: waitingView.Session, Item: "a1", Who: fleet.Who{Surface: fleet.SurfaceSlack, User: "UALICE"}}
	if c := d.commands(); len(c) != 1 || c[0] != want {
		t.Fatalf("commands %+v, want %+v", c, want)
	}
	m := fs.Messages("CALLOW")[0]
	if m.Edits != 1 || len(m.Buttons) != 0 || !strings.Contains(m.Text, "allowed once by <@UALICE>") || !strings.Contains(m.BlockText, "allowed once by <@UALICE>") {
		t.Errorf("the message after the decision: %+v", m)
	}
	// The same press again: nothing waits on it any more; told, not done.
	pressButton(s, allow, time.Now(), "slack-secret")
	if len(d.commands()) != 1 || len(fs.Ephemerals()) != 2 {
		t.Errorf("a second press: %+v, %+v", d.commands(), fs.Ephemerals())
	}
	// An option of the question answers it with the option's words.
	q := fs.Messages("CALLOW")[1]
	pressButton(s, slacktest.Interaction(q, q.Buttons[1], "UALICE"), time.Now(), "slack-secret")
	if c := d.commands(); len(c) != 2 || c[1].Verb != fleet.Answer || c[1].Text != "postgres" || c[1].Who.User != "UALICE" {
		t.Errorf("the option's press: %+v", c)
	}
	if m := fs.Messages("CALLOW")[1]; !strings.Contains(m.Text, "answered by <@UALICE>: postgres") {
		t.Errorf("the question after its answer: %+v", m)
	}
}

// A press for an earlier task of the request decides nothing.
func TestSlackGatePressEarlierTask(t *testing.T) {
	s, fs, d, _ := slackGateRig(t)
	a := fs.Messages("CALLOW")[0]
	b := a.Buttons[2]
	b.Value = "t6|a1"
	pressButton(s, slacktest.Interaction(a, b, "UALICE"), time.Now(), "slack-secret")
	if len(d.commands()) != 0 || len(fs.Ephemerals()) != 1 {
		t.Errorf("an old button decided: %+v", d.commands())
	}
}

// GitHub: a pending item is a comment listing its id and commands; a
// writer's command in the thread (every comment that reaches tellDaemon is
// a writer's) decides it through Do, and a command for something not
// pending is answered, not carried out.
func TestGitHubGateCommands(t *testing.T) {
	s, _ := newSlackService(t)
	conv := &fakeConv{}
	s.convFor = func(Request) conversation { return conv }
	d := &gateDaemon{v: waitingView}
	d.v.Pending = slices.Clone(waitingView.Pending)
	s.d = d
	r := Request{Key: "github:acme/app#4", Source: "github", Repo: "acme/app", Number: 4, Session: waitingView.Session}
	ctx := context.Background()
	if err := s.gateSync(ctx, r, d.v); err != nil {
		t.Fatal(err)
	}
	if len(conv.posts) != 2 || !strings.Contains(conv.posts[0].text, "`/ralph approve a1 --task`") || !strings.Contains(conv.posts[0].text, "`/ralph deny a1 [reason]`") ||
		!strings.Contains(conv.posts[1].text, "`/ralph answer q2 TEXT`") || !strings.Contains(conv.posts[1].text, "`postgres`") {
		t.Fatalf("posts %+v", conv.posts)
	}
	entries := []Entry{{ID: "101", Author: "alice", Body: "/ralph approve a9"}, {ID: "102", Author: "alice", Body: "/ralph deny a1 not today\nthanks"},
		{ID: "103", Author: "bob", Body: "/ralph answer q2 postgres"}}
	if err := s.tellDaemon(ctx, r, entries); err != nil {
		t.Fatal(err)
	}
	c := d.commands()
	if len(c) != 2 || c[0].Verb != fleet.Deny || c[0].Item != "a1" || c[0].Text != "not today\nthanks" || c[0].Who != (fleet.Who{Surface: fleet.SurfaceGitHub, User: "alice"}) ||
		c[1].Verb != fleet.Answer || c[1].Text != "postgres" || c[1].Who.User != "bob" {
		t.Fatalf("commands %+v", c)
	}
	if len(conv.posts) != 3 || !strings.Contains(conv.posts[2].text, "No tool call a9 waits for a decision (waiting: a1, q2)") {
		t.Errorf("the unknown item was not answered: %+v", conv.posts)
	}
}

// Over Socket Mode a press comes as an interactive envelope: it is
// acknowledged and carried out as one on the interactive route.
func TestSlackGatePressOverSocketMode(t *testing.T) {
	s, fs, d, _ := slackGateRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.socketMode(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitUntil(t, "a Socket Mode connection", fs.Connected)
	a := fs.Messages("CALLOW")[0]
	env, err := fs.SendInteractive(slacktest.Interaction(a, a.Buttons[1], "UALICE"))
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the press carried out", func() bool { return len(d.commands()) == 1 && fs.Acked(env) })
	want := fleet.Command{Verb: fleet.Approve, Session: waitingView.Session, Item: "a1", ForTask: true, Who: fleet.Who{Surface: fleet.SurfaceSlack, User: "UALICE"}}
	if c := d.commands(); c[0] != want {
		t.Errorf("command %+v, want %+v", c[0], want)
	}
	waitUntil(t, "the message updated", func() bool {
		return strings.Contains(fs.Messages("CALLOW")[0].Text, "allowed for this task by <@UALICE>")
	})
}

// A stranger's command in a request's thread, or their reply while its
// agent waits, decides nothing and is told so, to them alone; their
// chatter while nothing waits is ignored silently.
func TestSlackGateStrangerReply(t *testing.T) {
	s, fs, d, _ := slackGateRig(t)
	say := func(i int, text string) {
		t.Helper()
		body, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UMALLORY", Text: text, TS: "2.00000" + strconv.Itoa(i), ThreadTS: "1.000100"}, false)
		if code, _ := slackPost(s, body, time.Now(), "slack-secret", 0); code != http.StatusOK {
			t.Fatalf("%q: %d", text, code)
		}
	}
	for i, text := range []string{"approve a1", "<@UBOT> deny a1 no", "postgres"} {
		say(i, text)
	}
	say(1, "<@UBOT> deny a1 no") // the same message's other event
	if len(d.commands()) != 0 {
		t.Errorf("a stranger decided: %+v", d.commands())
	}
	if e := fs.Ephemerals(); len(e) != 3 || e[0].User != "UMALLORY" || e[2].ThreadTS != "1.000100" {
		t.Errorf("ephemerals %+v", e)
	}
	d.mu.Lock()
	d.v.State, d.v.Pending = fleet.Running, nil
	d.mu.Unlock()
	say(5, "nice work")
	if e := fs.Ephemerals(); len(e) != 3 {
		t.Errorf("chatter while nothing waits was answered: %+v", e)
	}
}
