package requests

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"ralph/internal/github/githubtest"
	"ralph/internal/requests/slacktest"
)

func TestSlackTrigger(t *testing.T) {
	cfg := SlackConfig{Channels: []string{"CALLOW"}, Users: []string{"UALICE", "UBOB"}}
	open := SlackConfig{Channels: []string{"CALLOW"}}
	for _, tc := range []struct {
		name string
		cfg  SlackConfig
		m    slackMsg
		want trigger
		ok   bool
	}{
		{"mention opens a request", cfg, slackMsg{Type: "app_mention", Channel: "CALLOW", User: "UALICE", Text: "<@UBOT> add a file", TS: "1.1"},
			trigger{Channel: "CALLOW", Thread: "1.1", TS: "1.1", User: "UALICE", Text: "add a file", New: true}, true},
		{"mention in a thread names the thread", cfg, slackMsg{Type: "app_mention", Channel: "CALLOW", User: "UBOB", Text: "<@UBOT> do it", TS: "1.5", ThreadTS: "1.1"},
			trigger{Channel: "CALLOW", Thread: "1.1", TS: "1.5", User: "UBOB", Text: "do it", New: true}, true},
		{"message with the mention counts as one", cfg, slackMsg{Type: "message", ChannelType: "channel", Channel: "CALLOW", User: "UALICE", Text: "hey <@UBOT> go", TS: "1.1"},
			trigger{Channel: "CALLOW", Thread: "1.1", TS: "1.1", User: "UALICE", Text: "hey  go", New: true}, true},
		{"thread reply without mention joins", cfg, slackMsg{Type: "message", ChannelType: "channel", Channel: "CALLOW", User: "UALICE", Text: "blue", TS: "1.7", ThreadTS: "1.1"},
			trigger{Channel: "CALLOW", Thread: "1.1", TS: "1.7", User: "UALICE", Text: "blue"}, true},
		{"channel chatter", cfg, slackMsg{Type: "message", ChannelType: "channel", Channel: "CALLOW", User: "UALICE", Text: "lunch?", TS: "1.8"}, trigger{}, false},
		{"channel not allowed", cfg, slackMsg{Type: "app_mention", Channel: "COTHER", User: "UALICE", Text: "<@UBOT> x", TS: "1.1"}, trigger{}, false},
		{"user not allowed", cfg, slackMsg{Type: "app_mention", Channel: "CALLOW", User: "UMALLORY", Text: "<@UBOT> x", TS: "1.1"}, trigger{}, false},
		{"any user when none listed", open, slackMsg{Type: "app_mention", Channel: "CALLOW", User: "UMALLORY", Text: "<@UBOT> x", TS: "1.1"},
			trigger{Channel: "CALLOW", Thread: "1.1", TS: "1.1", User: "UMALLORY", Text: "x", New: true}, true},
		{"own message by user id", cfg, slackMsg{Type: "message", Channel: "CALLOW", User: "UBOT", Text: "❓ question", TS: "1.2", ThreadTS: "1.1"}, trigger{}, false},
		{"a bot's message", cfg, slackMsg{Type: "message", Channel: "CALLOW", User: "UALICE", BotID: "BOTHER", Text: "x", TS: "1.2", ThreadTS: "1.1"}, trigger{}, false},
		{"an edit", cfg, slackMsg{Type: "message", SubType: "message_changed", Channel: "CALLOW", User: "UALICE", Text: "x", TS: "1.2", ThreadTS: "1.1"}, trigger{}, false},
		{"a broadcast reply", cfg, slackMsg{Type: "message", SubType: "thread_broadcast", Channel: "CALLOW", User: "UALICE", Text: "retry", TS: "1.3", ThreadTS: "1.1"},
			trigger{Channel: "CALLOW", Thread: "1.1", TS: "1.3", User: "UALICE", Text: "retry"}, true},
		{"DM from a listed user", cfg, slackMsg{Type: "message", ChannelType: "im", Channel: "DALICE", User: "UALICE", Text: "fix it", TS: "2.1"},
			trigger{Channel: "DALICE", Thread: "2.1", TS: "2.1", User: "UALICE", Text: "fix it", New: true}, true},
		{"DM when no users are listed", open, slackMsg{Type: "message", ChannelType: "im", Channel: "DX", User: "UALICE", Text: "fix it", TS: "2.1"}, trigger{}, false},
		{"other event types", cfg, slackMsg{Type: "reaction_added", Channel: "CALLOW", User: "UALICE", TS: "1.1"}, trigger{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := slackTrigger(tc.cfg, tc.m, "UBOT")
			if ok != tc.ok || got != tc.want {
				t.Errorf("got %+v %v, want %+v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSlackRequestNames(t *testing.T) {
	r := slackRequest(trigger{Channel: "C0AB", Thread: "1712345678.000100", TS: "1712345678.000100", User: "U1",
		Text: "Add a greeting\nwith details"}, "acme/app", time.Unix(0, 0))
	if r.Key != "slack:C0AB/1712345678.000100" || r.Session != "slack-c0ab-1712345678000100" || r.Branch != "ralph/slack-c0ab-1712345678000100" || r.Title != "Add a greeting" {
		t.Errorf("%+v", r)
	}
	evil := slackRequest(trigger{Channel: "C/../x", Thread: "1.2;rm -rf", Text: ""}, "acme/app", time.Unix(0, 0))
	if strings.ContainsAny(evil.Branch[len("ralph/"):], "/; .") || evil.Title != "Request from Slack" {
		t.Errorf("unsafe names: %+v", evil)
	}
}

func TestSlackConfig(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "t", "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s",
		"RALPH_SLACK_CHANNELS": "C1, C2=acme/other"}
	get := func(k string) string { return env[k] }
	if _, _, err := FromEnv(get); err == nil {
		t.Error("a channel without a repository and no RALPH_SLACK_REPO: want an error")
	}
	env["RALPH_SLACK_REPO"] = "acme/app"
	cfg, on, err := FromEnv(get)
	if err != nil || !on {
		t.Fatal(err)
	}
	if cfg.Slack.RepoFor("C1") != "acme/app" || cfg.Slack.RepoFor("C2") != "acme/other" || len(cfg.Slack.Channels) != 2 {
		t.Errorf("%+v", cfg.Slack)
	}
	env["RALPH_SLACK_CHANNELS"] = "C1=bad"
	if _, _, err := FromEnv(get); err == nil {
		t.Error("a bad channel repository: want an error")
	}
}

func newSlackService(t *testing.T) (*Service, *slacktest.Server) {
	t.Helper()
	gh := githubtest.Start(t, githubtest.Data{Repos: map[string][]githubtest.Issue{"acme/app": nil}, Token: "tok"})
	fs := slacktest.Start(t, slacktest.Options{BotToken: "xoxb-test-token", AppToken: "xapp-test-token"})
	s, err := New(Config{GitHubToken: "tok", GitHubAPIURL: gh.URL, Slack: SlackConfig{BotToken: fs.BotToken, AppToken: fs.AppToken,
		SigningSecret: "slack-secret", APIURL: fs.URL, Repo: "acme/app", Channels: []string{"CALLOW"}}}, Options{Root: t.TempDir(), Log: tlog{t}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(filepath.Join(t.TempDir(), "requests.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, fs
}

func slackPost(s *Service, body []byte, at time.Time, secret string, retry int) (int, string) {
	req := httptest.NewRequest("POST", SlackWebhookPath, bytes.NewReader(body))
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("X-Slack-Signature", slacktest.Sign(secret, at, body))
	if retry > 0 {
		req.Header.Set("X-Slack-Retry-Num", "1")
	}
	w := httptest.NewRecorder()
	s.Routes()[SlackWebhookPath].ServeHTTP(w, req)
	return w.Code, w.Body.String()
}

func TestSlackWebhook(t *testing.T) {
	s, _ := newSlackService(t)
	count := func() int { all, _ := s.store.All(); return len(all) }
	now := time.Now()
	if code, body := slackPost(s, []byte(`{"type":"url_verification","challenge":"ch4ll"}`), now, "slack-secret", 0); code != 200 || body != "ch4ll" {
		t.Errorf("challenge: %d %q", code, body)
	}
	mention, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "<@UBOT> add hello.txt", TS: "100.1"}, true)
	if code, _ := slackPost(s, mention, now, "wrong", 0); code != http.StatusUnauthorized || count() != 0 {
		t.Errorf("forged: %d, %d requests", code, count())
	}
	if code, _ := slackPost(s, mention, now.Add(-6*time.Minute), "slack-secret", 0); code != http.StatusUnauthorized || count() != 0 {
		t.Errorf("stale: %d, %d requests", code, count())
	}
	if code, _ := slackPost(s, mention, now, "slack-secret", 0); code != 200 || count() != 1 {
		t.Fatalf("mention: %d, %d requests", code, count())
	}
	if code, _ := slackPost(s, mention, now, "slack-secret", 1); code != 200 || count() != 1 {
		t.Errorf("retry: %d, %d requests", code, count())
	}
	// The same message as a message event, and a second mention in the
	// thread: the same request.
	asMsg, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "<@UBOT> add hello.txt", TS: "100.1"}, false)
	again, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "<@UBOT> also a README", TS: "100.3", ThreadTS: "100.1"}, true)
	other, _ := slacktest.Callback(slacktest.Msg{Channel: "COTHER", User: "UALICE", Text: "<@UBOT> x", TS: "100.4"}, true)
	for _, b := range [][]byte{asMsg, again, other} {
		if code, _ := slackPost(s, b, now, "slack-secret", 0); code != 200 {
			t.Errorf("%d", code)
		}
	}
	if count() != 1 {
		t.Errorf("%d requests, want 1", count())
	}
	es, _ := s.store.Entries("slack:CALLOW/100.1")
	if len(es) != 2 || es[0].ID != "opening" || es[1].Body != "also a README" {
		t.Errorf("entries: %+v", es)
	}
}

// Socket Mode against the fake: apps.connections.open hands a ws:// URL,
// the event comes as an envelope, is recorded, then acknowledged.
func TestSlackSocketMode(t *testing.T) {
	s, fs := newSlackService(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.socketMode(ctx) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, "a socket", fs.Connected)
	body, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "<@UBOT> via socket", TS: "200.1"}, true)
	env, err := fs.Send(body)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the ack", func() bool { return fs.Acked(env) })
	if r, err := s.store.Get("slack:CALLOW/200.1"); err != nil || r.Title != "via socket" {
		t.Errorf("%+v %v", r, err)
	}
}

// Post replies in the thread once per marker; Edit updates in place.
func TestSlackConversation(t *testing.T) {
	s, fs := newSlackService(t)
	r := Request{Key: "slack:CALLOW/1.1", Source: "slack", Channel: "CALLOW", Thread: "1.1"}
	c := s.conv(r)
	ts, err := c.Post(context.Background(), r, "<!-- m1 -->", "**ralph** <!channel> xoxb-test-token reply `/ralph retry`")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Post(context.Background(), r, "<!-- m1 -->", "again"); again != ts {
		t.Errorf("repeat posted anew: %s vs %s", again, ts)
	}
	if err := c.Edit(context.Background(), r, ts, "", "edited"); err != nil {
		t.Fatal(err)
	}
	ms := fs.Messages("CALLOW")
	if len(ms) != 1 || ms[0].ThreadTS != "1.1" || ms[0].Text != "edited" || ms[0].Edits != 1 {
		t.Fatalf("%+v", ms)
	}
	if got := slackText("**ralph** <!channel> xoxb-test-token reply `/ralph retry`"); strings.Contains(got, "<!channel>") ||
		strings.Contains(got, "xoxb-test-token") || !strings.Contains(got, "*ralph*") || !strings.Contains(got, "`retry`") {
		t.Errorf("slackText: %q", got)
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

type tlog struct{ t *testing.T }

func (l tlog) Write(b []byte) (int, error) { l.t.Log(strings.TrimSpace(string(b))); return len(b), nil }
