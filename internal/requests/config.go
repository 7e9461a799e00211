package requests

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is the request settings (DESIGN.md, the github and slack rows).
type Config struct {
	GitHubToken   string
	GitHubAPIURL  string   // "" for api.github.com
	Repos         []string // owner/name
	Label         string
	WebhookSecret string
	// Poll is how often the labelled issues are looked for; 0 turns
	// polling off (webhooks only).
	Poll time.Duration
	// MaxLoops is each request's loop budget per start or answer.
	MaxLoops int
	// Sandbox says requests' agents run in bubblewrap where it is
	// available (RALPH_REQUEST_SANDBOX=off turns it off).
	Sandbox bool
	// Remind is how long a request waits on its questions before one
	// reminder is posted (RALPH_REQUEST_REMIND); 0 turns reminders off.
	Remind time.Duration
	// FollowupRounds caps the follow-up rounds a request's pull request
	// gets from its reviews, checks and conflicts (RALPH_PR_FOLLOWUP_ROUNDS);
	// 0: none, ralph opens the pull request and only watches for its end.
	FollowupRounds int

	Slack SlackConfig
}

// SlackConfig is the Slack settings.
type SlackConfig struct {
	BotToken      string
	SigningSecret string
	AppToken      string
	APIURL        string
	// Repo is the default target repository; ChannelRepos overrides it
	// for a channel ("C123=owner/name" in RALPH_SLACK_CHANNELS).
	Repo         string
	Channels     []string
	ChannelRepos map[string]string
	Users        []string
}

// RepoFor is the target repository of a request from channel ("" when
// none is configured).
func (c SlackConfig) RepoFor(channel string) string {
	if r := c.ChannelRepos[channel]; r != "" {
		return r
	}
	return c.Repo
}

// splitChannels reads RALPH_SLACK_CHANNELS: ids, each optionally with
// "=owner/name", its own target repository.
func splitChannels(entries []string) (ids []string, repos map[string]string) {
	repos = map[string]string{}
	for _, e := range entries {
		id, repo, _ := strings.Cut(e, "=")
		id, repo = strings.TrimSpace(id), strings.TrimSpace(repo)
		if id == "" {
			continue
		}
		ids = append(ids, id)
		if repo != "" {
			repos[id] = repo
		}
	}
	return ids, repos
}

// On says whether the GitHub intake is configured.
func (c Config) On() bool { return c.GitHubToken != "" && len(c.Repos) > 0 }

// SlackOn says whether Slack requests are configured.
func (c Config) SlackOn() bool { return c.Slack.BotToken != "" }

func list(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// FromEnv reads the settings; on is false when neither GitHub repositories
// nor a Slack bot are configured.
func FromEnv(getenv func(string) string) (cfg Config, on bool, err error) {
	cfg = Config{GitHubToken: getenv("GITHUB_TOKEN"), GitHubAPIURL: getenv("GITHUB_API_URL"),
		Repos: list(getenv("RALPH_GITHUB_REPOS")), Label: strings.TrimSpace(getenv("RALPH_GITHUB_LABEL")),
		WebhookSecret: getenv("GITHUB_WEBHOOK_SECRET"), Poll: time.Minute, MaxLoops: 20, Sandbox: true, Remind: 24 * time.Hour, FollowupRounds: 5,
		Slack: SlackConfig{BotToken: getenv("SLACK_BOT_TOKEN"), SigningSecret: getenv("SLACK_SIGNING_SECRET"),
			AppToken: getenv("SLACK_APP_TOKEN"), APIURL: getenv("SLACK_API_URL"), Repo: strings.TrimSpace(getenv("RALPH_SLACK_REPO")),
			Channels: list(getenv("RALPH_SLACK_CHANNELS")), Users: list(getenv("RALPH_SLACK_USERS"))}}
	cfg.Slack.Channels, cfg.Slack.ChannelRepos = splitChannels(cfg.Slack.Channels)
	if cfg.Label == "" {
		cfg.Label = "ralph"
	}
	if v := strings.TrimSpace(getenv("RALPH_GITHUB_POLL")); v != "" {
		d, perr := time.ParseDuration(v)
		if perr != nil || d < 0 {
			return cfg, false, fmt.Errorf("RALPH_GITHUB_POLL %q: want a duration such as 1m (0 for webhooks only)", v)
		}
		cfg.Poll = d
	}
	if v := strings.TrimSpace(getenv("RALPH_REQUEST_MAX_LOOPS")); v != "" {
		if _, perr := fmt.Sscan(v, &cfg.MaxLoops); perr != nil || cfg.MaxLoops < 1 {
			return cfg, false, fmt.Errorf("RALPH_REQUEST_MAX_LOOPS %q: want a number of loops", v)
		}
	}
	if v := strings.TrimSpace(getenv("RALPH_REQUEST_REMIND")); v != "" {
		d, perr := time.ParseDuration(v)
		if perr != nil || d < 0 {
			return cfg, false, fmt.Errorf("RALPH_REQUEST_REMIND %q: want a duration such as 24h (0 for no reminder)", v)
		}
		cfg.Remind = d
	}
	if v := strings.TrimSpace(getenv("RALPH_PR_FOLLOWUP_ROUNDS")); v != "" {
		n, perr := strconv.Atoi(v)
		if cfg.FollowupRounds = n; perr != nil || n < 0 {
			return cfg, false, fmt.Errorf("RALPH_PR_FOLLOWUP_ROUNDS %q: want a number of rounds (0 for none)", v)
		}
	}
	if cfg.Sandbox, err = SandboxFromEnv(getenv); err != nil {
		return cfg, false, err
	}
	all := append(append([]string{}, cfg.Repos...), cfg.Slack.Repo)
	for _, r := range cfg.Slack.ChannelRepos {
		all = append(all, r)
	}
	for _, r := range all {
		if r == "" {
			continue
		}
		if o, n, ok := strings.Cut(r, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
			return cfg, false, fmt.Errorf("repository %q: want owner/name", r)
		}
	}
	if len(cfg.Repos) > 0 && cfg.GitHubToken == "" {
		return cfg, false, errors.New("RALPH_GITHUB_REPOS needs GITHUB_TOKEN (to read issues, push and open pull requests)")
	}
	if cfg.SlackOn() {
		switch {
		case len(cfg.Slack.Channels) == 0:
			return cfg, false, errors.New("SLACK_BOT_TOKEN needs RALPH_SLACK_CHANNELS (the channel ids allowed to make requests)")
		case cfg.Slack.Repo == "" && len(cfg.Slack.ChannelRepos) < len(cfg.Slack.Channels):
			return cfg, false, errors.New("SLACK_BOT_TOKEN needs RALPH_SLACK_REPO (the owner/name requests from Slack work on), or a repository for every channel (RALPH_SLACK_CHANNELS=C123=owner/name)")
		case cfg.GitHubToken == "":
			return cfg, false, errors.New("requests from Slack need GITHUB_TOKEN (to push and open pull requests on RALPH_SLACK_REPO)")
		case cfg.Slack.AppToken == "" && cfg.Slack.SigningSecret == "":
			return cfg, false, errors.New("SLACK_BOT_TOKEN needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (Events API)")
		}
	}
	return cfg, cfg.On() || cfg.SlackOn(), nil
}

// SandboxFromEnv reads RALPH_REQUEST_SANDBOX: whether requests' agents run
// in the sandbox (on unless turned off). The daemon and, on the Temporal
// backend, every worker read it.
func SandboxFromEnv(getenv func(string) string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(getenv("RALPH_REQUEST_SANDBOX"))) {
	case "", "on", "true", "1", "bwrap":
		return true, nil
	case "off", "false", "0", "none":
		return false, nil
	}
	return false, errors.New("RALPH_REQUEST_SANDBOX: want on or off")
}
