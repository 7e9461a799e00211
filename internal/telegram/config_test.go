package telegram

import (
	"strings"
	"testing"
)

func TestFromEnv(t *testing.T) {
	const tok = "123456:secret-token_value"
	cases := []struct {
		name string
		env  map[string]string
		on   bool
		err  string
		want func(Config) bool
	}{
		{"off without a token", map[string]string{EnvAllowedChats: "1"}, false, "", nil},
		{"a token without an allow-list is refused", map[string]string{EnvToken: tok}, true, EnvAllowedChats + " is not", nil},
		{"an allow-list of nothing", map[string]string{EnvToken: tok, EnvAllowedChats: " , "}, true, "names no chat", nil},
		{"a bad chat id", map[string]string{EnvToken: tok, EnvAllowedChats: "12,abc"}, true, `"abc" is not a chat`, nil},
		{"a bad user id", map[string]string{EnvToken: tok, EnvAllowedChats: "12", EnvAllowedUsers: "x"}, true, EnvAllowedUsers, nil},
		{"a token with a path in it", map[string]string{EnvToken: "1:a/../b", EnvAllowedChats: "1"}, true, "not a bot token", nil},
		{"chats, groups, users, duplicates", map[string]string{EnvToken: " " + tok + " ", EnvAllowedChats: "42, -1001234,42", EnvAllowedUsers: "7"}, true, "",
			func(c Config) bool {
				return c.Token == tok && len(c.AllowedChats) == 2 && c.AllowedChats[1] == -1001234 && c.AllowedUsers[0] == 7 && !c.Webhook()
			}},
		{"API URL", map[string]string{EnvToken: tok, EnvAllowedChats: "1", EnvAPIURL: "http://127.0.0.1:9/"}, true, "",
			func(c Config) bool { return c.APIURL == "http://127.0.0.1:9" }},
		{"a bad API URL", map[string]string{EnvToken: tok, EnvAllowedChats: "1", EnvAPIURL: "ftp://x"}, true, EnvAPIURL, nil},
		{"webhook", map[string]string{EnvToken: tok, EnvAllowedChats: "1", EnvWebhookSecret: "s3cret_-", EnvWebhookURL: "https://ralph.example.org/webhooks/telegram"}, true, "",
			func(c Config) bool { return c.Webhook() && c.WebhookURL != "" }},
		{"a webhook URL without a secret", map[string]string{EnvToken: tok, EnvAllowedChats: "1", EnvWebhookURL: "https://x/webhooks/telegram"}, true, EnvWebhookSecret + " is not", nil},
		{"a secret Telegram would refuse", map[string]string{EnvToken: tok, EnvAllowedChats: "1", EnvWebhookSecret: "has space"}, true, EnvWebhookSecret, nil},
	}
	for _, c := range cases {
		cfg, on, err := FromEnv(func(k string) string { return c.env[k] })
		switch {
		case on != c.on:
			t.Errorf("%s: on %v", c.name, on)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != nil && !c.want(cfg):
			t.Errorf("%s: %+v", c.name, cfg)
		}
		if err != nil && strings.Contains(err.Error(), "secret-token_value") {
			t.Errorf("%s: the error shows the token", c.name)
		}
	}
}

func TestAllowed(t *testing.T) {
	c := Config{AllowedChats: []int64{42, -100}}
	if !c.allowed(42, 42) || !c.allowed(-100, 7) || c.allowed(43, 43) {
		t.Error("chats")
	}
	c.AllowedUsers = []int64{7}
	if c.allowed(42, 42) || !c.allowed(-100, 7) || c.allowed(43, 7) {
		t.Error("users narrow the chats")
	}
}
