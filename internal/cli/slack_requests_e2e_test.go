package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/requests/slacktest"
	"ralph/internal/serve"
)

const (
	slackSecret = "slack-signing-secret-value"
	slackBot    = "xoxb-1234567890-slacktoken"
	slackApp    = "xapp-1-A0FAKE-socketmodetoken"
)

// newSlackRig is the request rig with Slack as the only intake: the fake
// Slack Web API, the fake GitHub for the repository and the bare remote.
func newSlackRig(t *testing.T, s script.Script, extra ...string) (*requestRig, *slacktest.Server) {
	r := newRequestRig(t, s)
	fs := slacktest.Start(t, slacktest.Options{BotToken: slackBot, AppToken: slackApp})
	r.Env = append(r.Env, "RALPH_GITHUB_REPOS=", "SLACK_BOT_TOKEN="+slackBot, "SLACK_API_URL="+fs.URL,
		"RALPH_SLACK_REPO=acme/app", "RALPH_SLACK_CHANNELS=CALLOW", "RALPH_SLACK_USERS=UALICE")
	r.Env = append(r.Env, extra...)
	return r, fs
}

// waitSlack waits for a message of the bot in channel's thread containing
// want.
func waitSlack(t *testing.T, fs *slacktest.Server, channel, thread, want string) slacktest.Message {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, m := range fs.Messages(channel) {
			if m.ThreadTS == thread && strings.Contains(m.Text, want) {
				return m
			}
		}
	}
	t.Fatalf("no message with %q in thread %s; messages: %+v", want, thread, fs.Messages(channel))
	return slacktest.Message{}
}

func greetingScript() script.Script {
	return script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{clarity("NEEDS_CLARIFICATION", true, false, true, "Which greeting should hello.txt hold?", "asked")}},
		{Files: map[string]string{"hello.txt": "hello, world\n"},
			StdoutLines: []json.RawMessage{clarity("COMPLETE", true, true, false, "", "Added hello.txt, all done.")}},
	}}
}

// A mention of the bot in an allowed channel becomes a request: the
// agent's question is a reply in the thread, the requester's reply in the
// thread answers it, and the work ends as a pushed branch, a pull request
// and its link in the thread, with one status message edited in place.
// Forged, stale and retried deliveries, a channel not allowed, a stranger
// and the bot's own messages change nothing; no secret shows anywhere.
func TestRequestsSlackEndToEnd(t *testing.T) {
	r, fs := newSlackRig(t, greetingScript(), "SLACK_SIGNING_SECRET="+slackSecret)
	r.Start(1)
	hook := "http://" + r.Addr + "/webhooks/slack"
	post := func(body []byte, at time.Time, secret string, retry int) int {
		t.Helper()
		code, _, err := slacktest.Post(hook, secret, at, body, retry)
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	if code, _, _ := slacktest.Post(hook, slackSecret, time.Now(), []byte(`{"type":"url_verification","challenge":"abc123"}`), 0); code != http.StatusOK {
		t.Errorf("url_verification: %d", code)
	}
	root := fmt.Sprintf("%d.000100", time.Now().Unix())
	session := "slack-callow-" + strings.ReplaceAll(root, ".", "")
	mention, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "<@UBOT> Add a greeting file\nPlease add hello.txt.", TS: root}, true)
	if code := post(mention, time.Now(), "wrong-secret", 0); code != http.StatusUnauthorized {
		t.Errorf("forged: %d, want 401", code)
	}
	if code := post(mention, time.Now().Add(-10*time.Minute), slackSecret, 0); code != http.StatusUnauthorized {
		t.Errorf("stale: %d, want 401", code)
	}
	elsewhere, _ := slacktest.Callback(slacktest.Msg{Channel: "COTHER", User: "UALICE", Text: "<@UBOT> rm -rf", TS: root}, true)
	stranger, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UMALLORY", Text: "<@UBOT> from a stranger", TS: "1.000200"}, true)
	for _, b := range [][]byte{mention, elsewhere, stranger} {
		if code := post(b, time.Now(), slackSecret, 0); code != http.StatusOK {
			t.Errorf("delivery: %d", code)
		}
	}
	if code := post(mention, time.Now(), slackSecret, 1); code != http.StatusOK {
		t.Errorf("retry: %d", code)
	}
	q := waitSlack(t, fs, "CALLOW", root, "Which greeting should hello.txt hold?")
	v := r.WaitFor(session, "waiting for an answer", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	if v.Origin != "slack" || v.Title != "Add a greeting file" || v.OriginURL != "https://fake.slack.com/archives/CALLOW/p"+strings.ReplaceAll(root, ".", "") {
		t.Errorf("origin %q %q, title %q", v.Origin, v.OriginURL, v.Title)
	}
	// The bot's own question comes back as a message event: ignored.
	own, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UBOT", BotID: "BBOT", Text: q.Text, TS: q.TS, ThreadTS: root}, false)
	post(own, time.Now(), slackSecret, 0)
	time.Sleep(500 * time.Millisecond)
	if v := r.Status(session); len(v.Questions) == 0 {
		t.Fatalf("the bot's own message answered the question: %+v", v)
	}
	answer, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "Say hello, world.", TS: fmt.Sprintf("%d.000300", time.Now().Unix()), ThreadTS: root}, false)
	if code := post(answer, time.Now(), slackSecret, 0); code != http.StatusOK {
		t.Errorf("answer: %d", code)
	}
	link := waitSlack(t, fs, "CALLOW", root, "Pull request: https://github.com/acme/app/pull/")
	branch := "ralph/" + session
	pulls := r.gh.Pulls("acme/app")
	if len(pulls) != 1 || pulls[0].Head != branch || pulls[0].Base != "main" {
		t.Fatalf("pull requests: %+v", pulls)
	}
	// The pull request links back to the thread it was asked in.
	if want := "Requested in Slack: https://fake.slack.com/archives/CALLOW/p" + strings.ReplaceAll(root, ".", ""); !strings.Contains(pulls[0].Body, want) {
		t.Errorf("the pull request's body lacks %q:\n%s", want, pulls[0].Body)
	}
	if got := r.Git("", "--git-dir", r.remote, "show", branch+":hello.txt"); got != "hello, world\n" {
		t.Errorf("pushed hello.txt: %q", got)
	}
	// With its pull request open, the task waits for review.
	v = r.WaitFor(session, "waiting for review with its PR", func(v serve.TaskView) bool { return v.PRURL != "" && reviewing(v) })
	if !strings.Contains(link.Text, v.PRURL) {
		t.Errorf("pr_url %q; link %q", v.PRURL, link.Text)
	}
	// One request, one status message edited in place, nothing elsewhere.
	status := 0
	for _, m := range fs.Messages("CALLOW") {
		if m.ThreadTS != root {
			t.Errorf("a message outside the thread: %+v", m)
		}
		if strings.HasPrefix(m.Text, "🤖 *ralph*") {
			status++
			if m.Edits == 0 {
				t.Errorf("the status message was never edited: %q", m.Text)
			}
		}
		for _, secret := range []string{slackBot, slackSecret, "ghp_secrettoken123"} {
			if strings.Contains(m.Text, secret) {
				t.Errorf("a secret in a message: %q", m.Text)
			}
		}
	}
	if status != 1 {
		t.Errorf("%d status messages, want 1", status)
	}
	if len(fs.Messages("COTHER")) != 0 {
		t.Errorf("answered in a channel not allowed: %+v", fs.Messages("COTHER"))
	}
	if out := r.OK("list", "--json"); strings.Count(out, `"origin": "slack"`)+strings.Count(out, `"origin":"slack"`) != 1 {
		t.Errorf("want exactly one Slack task: %s", out)
	}
	for _, secret := range []string{slackBot, slackSecret} {
		if strings.Contains(r.Log.String(), secret) {
			t.Error("a Slack secret in the daemon's log")
		}
	}
}

// Socket Mode (SLACK_APP_TOKEN, no public address): the fake's
// apps.connections.open hands out a ws:// URL it serves; a mention sent
// over the socket is acknowledged and becomes a request whose question is
// posted in the thread.
func TestRequestsSlackSocketMode(t *testing.T) {
	r, fs := newSlackRig(t, greetingScript(), "SLACK_APP_TOKEN="+slackApp)
	r.Start(1)
	for deadline := time.Now().Add(30 * time.Second); !fs.Connected(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no Socket Mode connection; log:\n%s", r.Log.String())
		}
	}
	root := fmt.Sprintf("%d.000100", time.Now().Unix())
	body, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "<@UBOT> Add a greeting file", TS: root}, true)
	env, err := fs.Send(body)
	if err != nil {
		t.Fatal(err)
	}
	waitSlack(t, fs, "CALLOW", root, "Which greeting should hello.txt hold?")
	if !fs.Acked(env) {
		t.Error("the envelope was not acknowledged")
	}
	if strings.Contains(r.Log.String(), slackApp) {
		t.Error("the app token in the daemon's log")
	}
}

// A Slack request that makes no progress halts with a report in the
// thread that says to reply "retry"; that reply resumes it to a pull
// request.
func TestRequestsSlackHaltAndRetry(t *testing.T) {
	idle := script.Iteration{StdoutLines: []json.RawMessage{clarity("IN_PROGRESS", false, false, false, "", "thinking")}}
	r, fs := newSlackRig(t, script.Script{RepeatLast: true, Iterations: []script.Iteration{idle, idle, idle,
		{Files: map[string]string{"done.txt": "done\n"}, StdoutLines: []json.RawMessage{clarity("COMPLETE", true, true, false, "", "Done now.")}},
	}}, "SLACK_SIGNING_SECRET="+slackSecret, "RALPH_CB_NO_PROGRESS_THRESHOLD=3")
	r.Start(1)
	hook := "http://" + r.Addr + "/webhooks/slack"
	root := fmt.Sprintf("%d.000100", time.Now().Unix())
	mention, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "<@UBOT> Stuck work", TS: root}, true)
	if code, _, err := slacktest.Post(hook, slackSecret, time.Now(), mention, 0); err != nil || code != http.StatusOK {
		t.Fatalf("mention: %d %v", code, err)
	}
	halt := waitSlack(t, fs, "CALLOW", root, "Halted")
	if !strings.Contains(halt.Text, "reply `retry`") {
		t.Errorf("the halt report says not how to go on: %q", halt.Text)
	}
	retry, _ := slacktest.Callback(slacktest.Msg{Channel: "CALLOW", User: "UALICE", Text: "retry", TS: fmt.Sprintf("%d.000200", time.Now().Unix()), ThreadTS: root}, false)
	if code, _, err := slacktest.Post(hook, slackSecret, time.Now(), retry, 0); err != nil || code != http.StatusOK {
		t.Fatalf("retry: %d %v", code, err)
	}
	waitSlack(t, fs, "CALLOW", root, "Pull request: ")
	if p := r.gh.Pulls("acme/app"); len(p) != 1 {
		t.Errorf("pull requests: %+v", p)
	}
}
