package requests

import (
	"context"
	"testing"
	"time"

	"ralph/internal/requests/slacktest"
)

// A request's task links back to where it came from: the issue's page on
// GitHub (or an Enterprise server's), the thread's permalink on Slack.
func TestOriginURL(t *testing.T) {
	for _, c := range []struct{ api, want string }{
		{"", "https://github.com/acme/api/issues/42"},
		{"https://api.github.com", "https://github.com/acme/api/issues/42"},
		{"https://ghe.example.com/api/v3/", "https://ghe.example.com/acme/api/issues/42"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/acme/api/issues/42"},
	} {
		if got := issueWebURL(c.api, "acme/api", 42); got != c.want {
			t.Errorf("API %q: %s, want %s", c.api, got, c.want)
		}
	}
	fs := slacktest.Start(t, slacktest.Options{BotToken: "xoxb-test-token"})
	side := newSlackSide(SlackConfig{BotToken: "xoxb-test-token", APIURL: fs.URL}, nil, nil)
	if got, want := side.permalink(context.Background(), "C123", "1712000000.000100"), "https://fake.slack.com/archives/C123/p1712000000000100"; got != want {
		t.Errorf("permalink %q, want %q", got, want)
	}
	bad := newSlackSide(SlackConfig{BotToken: "xoxb-wrong", APIURL: fs.URL}, nil, nil)
	bad.sleep = func(context.Context, time.Duration) error { return nil }
	if got := bad.permalink(context.Background(), "C123", "1.2"); got != "" {
		t.Errorf("permalink without the workspace: %q", got)
	}
}
