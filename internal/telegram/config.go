package telegram

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The environment that turns the bot on and configures it (DESIGN.md,
// "The fleet": telegram).
const (
	EnvToken         = "TELEGRAM_BOT_TOKEN"
	EnvAllowedChats  = "TELEGRAM_ALLOWED_CHATS"
	EnvAllowedUsers  = "TELEGRAM_ALLOWED_USERS"
	EnvAPIURL        = "TELEGRAM_API_URL"
	EnvWebhookSecret = "TELEGRAM_WEBHOOK_SECRET"
	EnvWebhookURL    = "TELEGRAM_WEBHOOK_URL"
)

// WebhookPath is the daemon's route for Telegram's webhook.
const WebhookPath = "/webhooks/telegram"

// Config is the bot's resolved configuration.
type Config struct {
	Token string
	// AllowedChats may act; the first also hears of the tasks not
	// started from a chat (ralph task start, later GitHub and Slack).
	AllowedChats []int64
	// AllowedUsers, when set, narrows the allowed chats to these people.
	AllowedUsers []int64
	// APIURL is the Bot API's base ("" Telegram's own).
	APIURL string
	// WebhookSecret turns webhook mode on: updates come to WebhookPath on
	// the daemon's listener with this secret, instead of long polling.
	WebhookSecret string
	// WebhookURL, when set, is registered with Telegram at start (the
	// public https address that reaches WebhookPath).
	WebhookURL string
}

// Webhook reports webhook mode.
func (c Config) Webhook() bool { return c.WebhookSecret != "" }

var webhookSecretShape = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// FromEnv reads the configuration. on is false when TELEGRAM_BOT_TOKEN is
// not set. A token without an allow-list is an error: a bot anyone could
// drive is worse than no bot, and a configuration mistake should stop the
// daemon, not go unnoticed.
func FromEnv(getenv func(string) string) (cfg Config, on bool, err error) {
	cfg.Token = strings.TrimSpace(getenv(EnvToken))
	if cfg.Token == "" {
		return Config{}, false, nil
	}
	if strings.ContainsAny(cfg.Token, "/?#% ") {
		return Config{}, true, fmt.Errorf("%s: not a bot token (want the digits:secret that BotFather gives)", EnvToken)
	}
	chats := strings.TrimSpace(getenv(EnvAllowedChats))
	if chats == "" {
		return Config{}, true, fmt.Errorf("%s is set but %s is not: the bot would answer no one; list the chat ids that may drive the fleet (comma-separated)", EnvToken, EnvAllowedChats)
	}
	if cfg.AllowedChats, err = ids(EnvAllowedChats, chats); err != nil {
		return Config{}, true, err
	}
	if len(cfg.AllowedChats) == 0 {
		return Config{}, true, fmt.Errorf("%s names no chat", EnvAllowedChats)
	}
	if cfg.AllowedUsers, err = ids(EnvAllowedUsers, getenv(EnvAllowedUsers)); err != nil {
		return Config{}, true, err
	}
	if u := strings.TrimSpace(getenv(EnvAPIURL)); u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return Config{}, true, fmt.Errorf("%s %q: want an http(s) URL", EnvAPIURL, u)
		}
		cfg.APIURL = strings.TrimRight(u, "/")
	}
	cfg.WebhookSecret = strings.TrimSpace(getenv(EnvWebhookSecret))
	cfg.WebhookURL = strings.TrimSpace(getenv(EnvWebhookURL))
	switch {
	case cfg.WebhookSecret != "" && !webhookSecretShape.MatchString(cfg.WebhookSecret):
		return Config{}, true, fmt.Errorf("%s: 1 to 256 of A-Z, a-z, 0-9, '_' and '-' (what Telegram accepts)", EnvWebhookSecret)
	case cfg.WebhookURL != "" && cfg.WebhookSecret == "":
		return Config{}, true, fmt.Errorf("%s is set but %s is not: a webhook without a secret would take updates from anyone", EnvWebhookURL, EnvWebhookSecret)
	case cfg.WebhookURL != "":
		if p, err := url.Parse(cfg.WebhookURL); err != nil || p.Host == "" || (p.Scheme != "https" && p.Scheme != "http") {
			return Config{}, true, fmt.Errorf("%s %q: want the public https URL of %s", EnvWebhookURL, cfg.WebhookURL, WebhookPath)
		}
	}
	return cfg, true, nil
}

// ids reads comma-separated Telegram ids (a group's is negative).
func ids(name, s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%s: %q is not a chat or user id (a number; a group's is negative)", name, f)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// allowed says whether a person in a chat may act.
func (c Config) allowed(chat, user int64) bool {
	if !slices.Contains(c.AllowedChats, chat) {
		return false
	}
	return len(c.AllowedUsers) == 0 || slices.Contains(c.AllowedUsers, user)
}
