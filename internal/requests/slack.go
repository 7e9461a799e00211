package requests

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"ralph/internal/redact"
)

// slackSide is the Slack end of requests (DESIGN.md's slack row): the Web
// API client that talks in a request's thread, and who the bot is.
type slackSide struct {
	api   *slack.Client
	store func() *Store
	sleep func(context.Context, time.Duration) error

	// intake takes one event at a time: a message's app_mention and
	// message events may arrive together and must count once.
	intake sync.Mutex

	mu    sync.Mutex
	user  string // the bot's own user id (auth.test)
	botID string
	team  string // the workspace's address (auth.test's url)
}

func newSlackSide(cfg SlackConfig, hc *http.Client, store func() *Store) *slackSide {
	opts := []slack.Option{}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(strings.TrimSuffix(cfg.APIURL, "/")+"/"))
	}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	if hc != nil {
		opts = append(opts, slack.OptionHTTPClient(hc))
	}
	return &slackSide{api: slack.New(cfg.BotToken, opts...), store: store, sleep: sleepCtx}
}

// self is the bot's user and bot ids, asked of auth.test once.
func (c *slackSide) self(ctx context.Context) (user, botID string, err error) {
	c.mu.Lock()
	user, botID = c.user, c.botID
	c.mu.Unlock()
	if user != "" {
		return user, botID, nil
	}
	err = c.retry(ctx, func() error {
		r, err := c.api.AuthTestContext(ctx)
		if err == nil {
			user, botID = r.UserID, r.BotID
			c.mu.Lock()
			c.team = r.URL
			c.mu.Unlock()
		}
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("slack auth.test: %w", err)
	}
	c.mu.Lock()
	c.user, c.botID = user, botID
	c.mu.Unlock()
	return user, botID, nil
}

// retry runs call up to four times, waiting as Slack asks on a rate limit
// and backing off on a failure to reach it; Slack's own refusals
// (invalid_auth, channel_not_found) are final.
func (c *slackSide) retry(ctx context.Context, call func() error) error {
	wait := 500 * time.Millisecond
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		if err = call(); err == nil {
			return nil
		}
		var rl *slack.RateLimitedError
		var se slack.SlackErrorResponse
		switch {
		case errors.As(err, &rl):
			wait = min(max(rl.RetryAfter, time.Second), 30*time.Second)
		case errors.As(err, &se), errors.Is(err, context.Canceled):
			return err
		}
		if c.sleep(ctx, wait) != nil {
			return err
		}
		wait *= 2
	}
	return err
}

// Post replies in the request's thread. The marker makes it idempotent:
// the reply's ts is remembered under it, and a repeat returns that.
func (c *slackSide) Post(ctx context.Context, r Request, marker, text string) (string, error) {
	st := c.store()
	name := "slack-posted:" + r.Key + ":" + marker
	if ts := st.Cursor(name); ts != "" {
		return ts, nil
	}
	var ts string
	err := c.retry(ctx, func() (err error) {
		_, ts, err = c.api.PostMessageContext(ctx, r.Channel, slack.MsgOptionText(slackText(text), false),
			slack.MsgOptionTS(r.Thread), slack.MsgOptionDisableMediaUnfurl())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack chat.postMessage: %w", err)
	}
	return ts, st.SetCursor(name, ts)
}

// Permalink is the address of a message (a request's thread) in Slack.
func (c *slackSide) Permalink(ctx context.Context, channel, ts string) (string, error) {
	var link string
	err := c.retry(ctx, func() (err error) {
		link, err = c.api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: channel, Ts: ts})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack chat.getPermalink: %w", err)
	}
	return link, nil
}

// Edit rewrites a message ralph posted (the status message).
func (c *slackSide) Edit(ctx context.Context, r Request, ref, _, text string) error {
	err := c.retry(ctx, func() error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, r.Channel, ref, slack.MsgOptionText(slackText(text), false))
		return err
	})
	if err != nil {
		return fmt.Errorf("slack chat.update: %w", err)
	}
	return nil
}

// slackText turns a message written for GitHub into Slack's mrkdwn:
// secrets masked, &<> escaped (so an agent's words cannot ping a channel
// or forge a link), bold with single stars, and the retry command as a
// bare word (a "/ralph" line would be taken for a slash command).
func slackText(text string) string {
	text = redact.String(text)
	text = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text)
	return strings.NewReplacer("**", "*", "`/ralph retry`", "`retry`").Replace(text)
}

// permalink is the address of a thread's first message, as Slack writes
// its permalinks (WORKSPACE/archives/CHANNEL/pTS without its dot); "" when
// the workspace's address is not known.
func (c *slackSide) permalink(ctx context.Context, channel, ts string) string {
	if _, _, err := c.self(ctx); err != nil {
		return ""
	}
	c.mu.Lock()
	team := c.team
	c.mu.Unlock()
	u, err := url.Parse(team)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || channel == "" || ts == "" {
		return ""
	}
	return strings.TrimSuffix(team, "/") + "/archives/" + url.PathEscape(channel) + "/p" + strings.ReplaceAll(ts, ".", "")
}
