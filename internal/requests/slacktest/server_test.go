package slacktest

import (
	"context"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// slack-go against the fake: a wrong token is invalid_auth, the right one
// posts, threads and updates.
func TestWebAPI(t *testing.T) {
	s := Start(t, Options{BotToken: "xoxb-good"})
	ctx := context.Background()
	bad := slack.New("xoxb-bad", slack.OptionAPIURL(s.URL+"/"))
	if _, err := bad.AuthTestContext(ctx); err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Errorf("wrong token: %v", err)
	}
	api := slack.New("xoxb-good", slack.OptionAPIURL(s.URL+"/"))
	at, err := api.AuthTestContext(ctx)
	if err != nil || at.UserID != "UBOT" || at.BotID != "BBOT" {
		t.Fatalf("auth.test: %+v %v", at, err)
	}
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false), slack.MsgOptionTS("9.9"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("hi again", false)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "0.0", slack.MsgOptionText("x", false)); err == nil {
		t.Error("updating a missing message: want message_not_found")
	}
	if m := s.Messages("C1"); len(m) != 1 || m[0].Text != "hi again" || m[0].ThreadTS != "9.9" || m[0].Edits != 1 {
		t.Errorf("%+v", m)
	}
}
