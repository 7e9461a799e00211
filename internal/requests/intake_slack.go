package requests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"ralph/internal/httpcap"
)

// SlackWebhookPath is where the Events API delivers.
const SlackWebhookPath = "/webhooks/slack"

// slackMsg is what ralph reads of an app_mention or message event.
type slackMsg struct {
	Type, Channel, ChannelType, User, BotID, SubType, Text, TS, ThreadTS string
}

// trigger is a message ralph acts on: it opens a request (New) or joins
// the one of its thread.
type trigger struct {
	Channel, Thread string // the thread's root ts names the request
	TS, User, Text  string // Text without the bot's mention
	New             bool   // a mention or a direct message: may open a request
}

func (t trigger) key() string { return "slack:" + t.Channel + "/" + t.Thread }

// slackTrigger maps an event to a trigger; ok is false for what ralph
// ignores: its own messages and other bots', edits and joins, channels
// and users not allowed, and channel chatter outside a thread that does
// not mention it. Direct messages act only for listed users (or a DM
// channel listed in RALPH_SLACK_CHANNELS).
func slackTrigger(cfg SlackConfig, m slackMsg, self string) (trigger, bool) {
	if m.Type != "app_mention" && m.Type != "message" {
		return trigger{}, false
	}
	switch m.SubType {
	case "", "thread_broadcast", "file_share":
	default:
		return trigger{}, false
	}
	if m.BotID != "" || m.User == "" || m.User == self || m.TS == "" || m.Channel == "" {
		return trigger{}, false
	}
	im := m.ChannelType == "im"
	listed := slices.Contains(cfg.Channels, m.Channel)
	userOK := len(cfg.Users) == 0 || slices.Contains(cfg.Users, m.User)
	if !userOK || (!listed && !(im && len(cfg.Users) > 0)) {
		return trigger{}, false
	}
	mention := self != "" && strings.Contains(m.Text, "<@"+self+">")
	t := trigger{Channel: m.Channel, Thread: m.ThreadTS, TS: m.TS, User: m.User,
		Text: strings.TrimSpace(strings.ReplaceAll(m.Text, "<@"+self+">", "")),
		New:  m.Type == "app_mention" || mention || im}
	if t.Thread == "" {
		if !t.New {
			return trigger{}, false // channel chatter
		}
		t.Thread = m.TS
	}
	return t, true
}

// slackRequest is the request a trigger opens (not yet stored); its id is
// the channel and the thread's ts, reduced to safe characters.
var slackUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

func slackRequest(t trigger, repo string, now time.Time) Request {
	id := slackUnsafe.ReplaceAllString(strings.ToLower(t.Channel), "") + "-" + slackUnsafe.ReplaceAllString(t.Thread, "")
	title, _, _ := strings.Cut(t.Text, "\n")
	if title = strings.TrimSpace(title); title == "" {
		title = "Request from Slack"
	}
	if utf8.RuneCountInString(title) > 80 {
		title = string([]rune(title)[:77]) + "..."
	}
	return Request{Key: t.key(), Source: "slack", Repo: repo, Channel: t.Channel, Thread: t.Thread, Title: title,
		Body: t.Text, Author: t.User, Session: "slack-" + id, Branch: "ralph/slack-" + id, CreatedAt: now}
}

func eventMsg(inner slackevents.EventsAPIInnerEvent) (slackMsg, bool) {
	switch e := inner.Data.(type) {
	case *slackevents.AppMentionEvent:
		return slackMsg{Type: "app_mention", Channel: e.Channel, User: e.User, BotID: e.BotID, Text: e.Text,
			TS: e.TimeStamp, ThreadTS: e.ThreadTimeStamp}, true
	case *slackevents.MessageEvent:
		return slackMsg{Type: "message", Channel: e.Channel, ChannelType: e.ChannelType, User: e.User, BotID: e.BotID,
			SubType: e.SubType, Text: e.Text, TS: e.TimeStamp, ThreadTS: e.ThreadTimeStamp}, true
	}
	return slackMsg{}, false
}

// slackEvent records what an event says: a new request, or a message of a
// request's thread. A message is taken once, however many events tell of
// it (a mention comes as app_mention and as message).
func (s *Service) slackEvent(ctx context.Context, inner slackevents.EventsAPIInnerEvent) error {
	m, ok := eventMsg(inner)
	if !ok {
		return nil
	}
	self, _, err := s.slack.self(ctx)
	if err != nil {
		return err
	}
	t, ok := slackTrigger(s.cfg.Slack, m, self)
	if !ok {
		return s.strangerInThread(ctx, m, self)
	}
	s.slack.intake.Lock()
	defer s.slack.intake.Unlock()
	seen := "slack-msg:" + t.Channel + "/" + t.TS
	if s.store.Seen(seen) {
		return nil
	}
	key := t.key()
	if _, err := s.store.Get(key); err == nil {
		added, err := s.store.AddEntry(key, Entry{ID: t.TS, Author: t.User, Body: t.Text, At: s.opts.Now()})
		if err != nil {
			return err
		}
		if added {
			s.logf("%s: message %s from %s", key, t.TS, t.User)
			s.poke(key)
		}
	} else if t.New {
		repo := s.cfg.Slack.RepoFor(t.Channel)
		if repo == "" {
			return nil
		}
		r := slackRequest(t, repo, s.opts.Now())
		created, err := s.store.Create(r, Entry{ID: "opening", Author: r.Author, Body: r.Title + "\n\n" + r.Body, At: r.CreatedAt})
		if err != nil {
			return err
		}
		if created {
			s.logf("%s: new request %q (session %s, branch %s)", key, r.Title, r.Session, r.Branch)
			s.poke(key)
		}
	}
	_, err = s.store.Delivery(seen, s.opts.Now())
	return err
}

// slackWebhook takes Events API deliveries: the signature and its
// timestamp first (forged, unsigned or older than five minutes: 401,
// nothing done), then the event id (a retry is acknowledged and ignored).
// The body is capped (Routes) before it is read.
func (s *Service) slackWebhook(w http.ResponseWriter, r *http.Request) {
	body, ok := s.slackVerified(w, r)
	if !ok {
		return
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		http.Error(w, "unreadable event", http.StatusBadRequest)
		return
	}
	switch ev.Type {
	case slackevents.URLVerification:
		var c slackevents.ChallengeResponse
		if err := json.Unmarshal(body, &c); err != nil {
			http.Error(w, "unreadable challenge", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, c.Challenge)
	case slackevents.CallbackEvent:
		cb, _ := ev.Data.(*slackevents.EventsAPICallbackEvent)
		if cb == nil || cb.EventID == "" {
			w.WriteHeader(http.StatusOK)
			return
		}
		if err := s.slackDelivery(r.Context(), cb.EventID, ev.InnerEvent); err != nil {
			// Not remembered: Slack's retry tries again.
			s.logf("slack event %s (retry %q): %v", cb.EventID, r.Header.Get("X-Slack-Retry-Num"), err)
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// slackVerified reads a delivery's body once its signature holds; when it
// does not, the reply is sent (401) and ok is false.
func (s *Service) slackVerified(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	// The signature's headers and timestamp are checked before the body
	// is read: a stale or unsigned delivery costs nothing.
	sv, err := slack.NewSecretsVerifier(r.Header, s.cfg.Slack.SigningSecret)
	if err != nil {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return nil, false
	}
	body, err = io.ReadAll(r.Body)
	if httpcap.TooLarge(err) {
		httpcap.RefuseTooLarge(w, httpcap.WebhookBody)
		return nil, false
	}
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return nil, false
	}
	_, _ = sv.Write(body)
	if err := sv.Ensure(); err != nil {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

// slackDelivery handles an event once by its event_id.
func (s *Service) slackDelivery(ctx context.Context, eventID string, inner slackevents.EventsAPIInnerEvent) error {
	id := "slack:" + eventID
	if s.store.Seen(id) {
		return nil
	}
	if err := s.slackEvent(ctx, inner); err != nil {
		return err
	}
	_, err := s.store.Delivery(id, s.opts.Now())
	return err
}

// socketMode listens to Slack over Socket Mode (SLACK_APP_TOKEN) until ctx
// ends, reconnecting with back-off. An event is acknowledged once it is
// recorded, so a failure leaves it to Slack's redelivery.
func (s *Service) socketMode(ctx context.Context) {
	wait := time.Second
	for ctx.Err() == nil {
		c := socketmode.New(s.slack.api)
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-runCtx.Done():
					return
				case e, ok := <-c.Events:
					if !ok {
						return
					}
					s.socketEvent(runCtx, c, e)
				}
			}
		}()
		start := time.Now()
		err := c.RunContext(runCtx)
		stop()
		<-done
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			wait = time.Second
		}
		s.logf("slack socket mode: %v; reconnecting in %s", err, wait)
		if sleepCtx(ctx, wait) != nil {
			return
		}
		wait = min(2*wait, time.Minute)
	}
}

func (s *Service) socketEvent(ctx context.Context, c *socketmode.Client, e socketmode.Event) {
	switch e.Type {
	case socketmode.EventTypeConnected:
		if s.once("slack-connected") {
			s.logf("slack socket mode: connected")
		}
	case socketmode.EventTypeInteractive:
		cb, ok := e.Data.(slack.InteractionCallback)
		if !ok || e.Request == nil {
			return
		}
		// Acknowledged first: Slack shows the person an error after 3s.
		if err := c.AckCtx(ctx, e.Request.EnvelopeID, nil); err != nil && ctx.Err() == nil {
			s.logf("slack ack %s: %v", e.Request.EnvelopeID, err)
		}
		if err := s.slackPress(ctx, cb); err != nil {
			s.logf("slack press: %v", err)
		}
	case socketmode.EventTypeEventsAPI:
		ev, ok := e.Data.(slackevents.EventsAPIEvent)
		if !ok || e.Request == nil {
			return
		}
		id := e.Request.EnvelopeID
		if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok && cb.EventID != "" {
			id = cb.EventID
		}
		if err := s.slackDelivery(ctx, id, ev.InnerEvent); err != nil {
			s.logf("slack event %s: %v", id, err)
			return
		}
		if err := c.AckCtx(ctx, e.Request.EnvelopeID, nil); err != nil && ctx.Err() == nil {
			s.logf("slack ack %s: %v", id, fmt.Sprint(err))
		}
	}
}
