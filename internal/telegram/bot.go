// Package telegram drives `ralph serve` from Telegram: the client's verbs
// as chat commands (/ralph start N task…, /ralph loop N [max], …,
// /circuit N, /watchdog status), buttons for the common next steps, and
// the notices a person must hear — a task done, halted, waiting on a
// usage limit, or asking a question, which is answered by replying to it.
//
// Only the chats (and, if listed, the people) of the allow-list act;
// everything else is ignored and logged without its text. What the bot
// must not forget — the updates it handled, which message asked which
// question — lives in SQLite, so a restart neither replays a command nor
// loses a question. The Bot API is reached through github.com/go-telegram/bot
// (long polling, or a webhook on the daemon's listener), with every call
// retried on network errors and 429s; a Telegram that is down delays
// messages and never stops a loop.
package telegram

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"ralph/internal/fleet"
	"ralph/internal/httpcap"
	"ralph/internal/redact"
	"ralph/internal/serve"
)

// Fleet is what the bot drives: *serve.Daemon.
type Fleet interface {
	// Do carries out a person's command: the one way the bot changes the
	// fleet, as every surface does.
	Do(ctx context.Context, c fleet.Command) (serve.TaskView, error)
	Status(session string) (serve.TaskView, error)
	List() ([]serve.TaskView, error)
	Sessions() ([]serve.Session, error)
	Watchdog() []serve.WatchStatus
}

// Options are the bot's surroundings.
type Options struct {
	Log io.Writer
	Now func() time.Time
	// Sleep waits out a back-off; tests record the calls.
	Sleep func(ctx context.Context, d time.Duration) error
	// PollTimeout is how long one getUpdates waits for news (default 50s).
	PollTimeout time.Duration
}

// Bot is the Telegram side of the daemon.
type Bot struct {
	cfg   Config
	opts  Options
	api   *bot.Bot
	store *store
	fleet Fleet
	ctx   context.Context // Run's: the jobs of webhook updates outlive their request
	ready atomic.Bool     // Run has begun: fleet, ctx and boxes are set
	// running is closed when ready is set: notices wait for it.
	running chan struct{}
	name    atomic.Value // the bot's username, once getMe answered

	handleMu sync.Mutex // one update at a time, in order
	boxes    *mailboxes

	mu         sync.Mutex
	logged     map[string]time.Time // when a noisy kind of line was last logged
	limitsSent map[string]time.Time // task → the usage-limit reset it was told of
	pollLogged time.Time
	pollQuiet  int
	// asked is closed (and replaced) each time a question message is
	// remembered: a reply that came first waits for it (awaitQuestion).
	asked chan struct{}
}

// New makes the bot; nothing is read or sent before Open and Run. The
// token joins the secrets ralph masks wherever it writes.
func New(cfg Config, opts Options) *Bot {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 50 * time.Second
	}
	redact.Add(cfg.Token, cfg.WebhookSecret)
	b := &Bot{cfg: cfg, opts: opts, running: make(chan struct{}), logged: map[string]time.Time{}, limitsSent: map[string]time.Time{}}
	b.name.Store("")
	return b
}

// Routes are the daemon's routes the bot serves outside the API token:
// the webhook, in webhook mode.
func (b *Bot) Routes() map[string]http.Handler {
	if !b.cfg.Webhook() {
		return nil
	}
	return map[string]http.Handler{"POST " + WebhookPath: httpcap.Body(httpcap.WebhookBody, http.HandlerFunc(b.webhook))}
}

// Open opens the bot's store at path (RALPH_HOME/telegram.db) and its
// client, which resumes polling after the last update handled.
func (b *Bot) Open(path string) error {
	st, err := openStore(path)
	if err != nil {
		return err
	}
	offset, err := st.offset(b.opts.Now())
	if err != nil {
		st.close()
		return err
	}
	opts := []bot.Option{
		// getMe is retried in Run instead: a Telegram out of reach at
		// start must not keep the daemon from starting.
		bot.WithSkipGetMe(),
		bot.WithHTTPClient(b.opts.PollTimeout, &http.Client{Timeout: b.opts.PollTimeout + 15*time.Second}),
		bot.WithInitialOffset(offset),
		bot.WithDefaultHandler(b.onUpdate),
		// Updates are handled one at a time, in order: each is marked
		// handled and posted to its session's mailbox, quickly.
		bot.WithNotAsyncHandlers(),
		bot.WithErrorsHandler(b.pollError),
		bot.WithAllowedUpdates(bot.AllowedUpdates{models.AllowedUpdateMessage, models.AllowedUpdateCallbackQuery}),
	}
	if b.cfg.APIURL != "" {
		opts = append(opts, bot.WithServerURL(b.cfg.APIURL))
	}
	api, err := bot.New(b.cfg.Token, opts...)
	if err != nil {
		st.close()
		return fmt.Errorf("telegram: %s", redact.String(err.Error()))
	}
	b.api, b.store = api, st
	return nil
}

// Close closes the store; Run must have returned.
func (b *Bot) Close() error {
	if b.store == nil {
		return nil
	}
	return b.store.close()
}

// Run serves the chat until ctx ends: it learns the bot's name, sets the
// webhook up (or removes one, for polling), then polls or waits for the
// webhook's updates. The daemon's outbox delivers the notices (Deliver).
func (b *Bot) Run(ctx context.Context, f Fleet) {
	b.fleet, b.ctx = f, ctx
	b.boxes = newMailboxes(ctx, b.logf)
	b.ready.Store(true)
	close(b.running)
	if b.setUp(ctx) && !b.cfg.Webhook() {
		b.api.Start(ctx)
	}
	<-ctx.Done()
	b.boxes.wait()
}

// setUp retries until Telegram knows the bot and the mode is set; false
// when ctx ended first.
func (b *Bot) setUp(ctx context.Context) bool {
	return b.retryForever(ctx, "set up", func(ctx context.Context) error {
		me, err := b.api.GetMe(ctx)
		if err != nil {
			return err
		}
		b.name.Store(me.Username)
		switch {
		case b.cfg.WebhookURL != "":
			// One connection at a time: Telegram then delivers in order.
			_, err = b.api.SetWebhook(ctx, &bot.SetWebhookParams{URL: b.cfg.WebhookURL, SecretToken: b.cfg.WebhookSecret,
				MaxConnections: 1, AllowedUpdates: []string{models.AllowedUpdateMessage, models.AllowedUpdateCallbackQuery}})
		case !b.cfg.Webhook():
			// getUpdates is refused while a webhook is set.
			_, err = b.api.DeleteWebhook(ctx, &bot.DeleteWebhookParams{})
		}
		if err != nil {
			return err
		}
		mode := "long polling"
		if b.cfg.Webhook() {
			mode = "webhook on " + WebhookPath
		}
		b.logf("connected as @%s (%s); %d allowed chat(s)", me.Username, mode, len(b.cfg.AllowedChats))
		return nil
	})
}

func (b *Bot) username() string { return b.name.Load().(string) }

// onUpdate takes one update: marked handled first (a restart never
// replays it), then the allow-list, then the work, posted to the
// mailbox of the session it is about.
func (b *Bot) onUpdate(_ context.Context, _ *bot.Bot, upd *models.Update) {
	b.handleMu.Lock()
	defer b.handleMu.Unlock()
	fresh, err := b.store.markUpdate(upd.ID, b.opts.Now())
	if err != nil {
		b.logf("update %d: %v; not acted on", upd.ID, err)
		return
	}
	if !fresh {
		return // delivered again: handled once already
	}
	switch {
	case upd.Message != nil:
		b.onMessage(upd.Message)
	case upd.CallbackQuery != nil:
		b.onCallback(upd.CallbackQuery)
	}
	// Edits, channel posts and the rest are not commands.
}

// userName is how a command's record names its Telegram sender.
func userName(u *models.User) string {
	if u == nil {
		return ""
	}
	if u.Username != "" {
		return "@" + u.Username
	}
	return strconv.FormatInt(u.ID, 10)
}

func (b *Bot) onMessage(m *models.Message) {
	if m.From == nil || m.From.IsBot {
		return // never another bot, nor this one
	}
	if !b.cfg.allowed(m.Chat.ID, m.From.ID) {
		b.stranger(m.Chat.ID, m.From.ID, "message")
		return
	}
	to := target{chat: m.Chat.ID, who: userName(m.From)}
	if m.IsTopicMessage {
		to.thread = m.MessageThreadID
	}
	if m.Chat.Type != models.ChatTypePrivate {
		to.replyTo = m.ID // in a group, say which command a reply is for
	}
	if cmd, ok := Parse(m.Text, b.username()); ok {
		b.post(cmd.Session, func(ctx context.Context) { b.do(ctx, to, cmd) })
		return
	}
	if m.ReplyToMessage == nil || m.Text == "" {
		return
	}
	taskID, session, ok, err := b.store.question(m.Chat.ID, m.ReplyToMessage.ID)
	if err != nil {
		b.logf("a reply in chat %d: %v", m.Chat.ID, err)
		return
	}
	text := m.Text
	if ok {
		b.post(session, func(ctx context.Context) { b.answer(ctx, to, taskID, session, text) })
		return
	}
	if from := m.ReplyToMessage.From; from != nil && from.IsBot && strings.EqualFold(from.Username, b.username()) {
		// A reply to one of the bot's messages that is not a known question
		// yet: a question's id is remembered once its send returns, and a
		// quick reply can come first. It waits for that, briefly.
		go b.awaitQuestion(to, m.Chat.ID, m.ReplyToMessage.ID, m.ReplyToMessage.Text, text)
	}
}

// questionWait bounds how long a reply waits for its question to be
// remembered.
const questionWait = 5 * time.Second

// awaitQuestion answers with text once message msg in chat is remembered
// as a question. A bot message whose record was lost (a daemon killed
// between the send and the record; the outbox then asks again) still
// names its task: asked is its text, the bot's own words, which no person
// can forge. Anything else is given up after questionWait.
func (b *Bot) awaitQuestion(to target, chat int64, msg int, asked, text string) {
	if session, taskID, ok := askedBy(asked); ok {
		if _, _, known, _ := b.store.question(chat, msg); !known {
			b.post(session, func(ctx context.Context) { b.answer(ctx, to, taskID, session, text) })
			return
		}
	}
	deadline := time.NewTimer(questionWait)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		if b.asked == nil {
			b.asked = make(chan struct{})
		}
		wake := b.asked
		b.mu.Unlock()
		taskID, session, ok, err := b.store.question(chat, msg)
		if err != nil {
			b.logf("a reply in chat %d: %v", chat, err)
			return
		}
		if ok {
			b.post(session, func(ctx context.Context) { b.answer(ctx, to, taskID, session, text) })
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			return
		}
	}
}

// noteAsked wakes the replies waiting for a question to be remembered.
func (b *Bot) noteAsked() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.asked != nil {
		close(b.asked)
	}
	b.asked = make(chan struct{})
}

func (b *Bot) onCallback(cq *models.CallbackQuery) {
	var chat int64
	var msgID int
	var text string
	switch {
	case cq.Message.Message != nil:
		chat, msgID, text = cq.Message.Message.Chat.ID, cq.Message.Message.ID, cq.Message.Message.Text
	case cq.Message.InaccessibleMessage != nil:
		chat, msgID = cq.Message.InaccessibleMessage.Chat.ID, cq.Message.InaccessibleMessage.MessageID
	}
	if cq.From.IsBot {
		return
	}
	if !b.cfg.allowed(chat, cq.From.ID) {
		b.stranger(chat, cq.From.ID, "button press")
		return
	}
	p, ok := parseButton(cq.Data)
	if !ok {
		b.post("", func(ctx context.Context) { b.answerCallback(ctx, cq.ID, "That button is not mine.") })
		return
	}
	to := target{chat: chat, who: userName(&cq.From)}
	b.post(p.session, func(ctx context.Context) { b.press(ctx, to, cq.ID, msgID, text, p) })
}

// post queues job on the mailbox of session, or on the common one for a
// name no session has (a typo must not make a mailbox).
func (b *Bot) post(session string, job func(context.Context)) {
	key := ""
	if session != "" {
		if all, err := b.fleet.Sessions(); err == nil {
			for _, s := range all {
				if s.Name == session {
					key = session
				}
			}
		}
	}
	b.boxes.post(key, job)
}

// stranger logs an ignored update — who, never what — at most every ten
// minutes per chat, so a flood cannot fill the log.
func (b *Bot) stranger(chat, user int64, what string) {
	if b.quiet(fmt.Sprint("chat ", chat)) {
		return
	}
	b.logf("ignored a %s from chat %d (user %d): not in %s/%s; its text is not logged", what, chat, user, EnvAllowedChats, EnvAllowedUsers)
}

// quiet says whether a line of this kind was logged in the last ten
// minutes (and if not, that it is logged now).
func (b *Bot) quiet(kind string) bool {
	now := b.opts.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if last, seen := b.logged[kind]; seen && now.Sub(last) < 10*time.Minute {
		return true
	}
	if len(b.logged) > 1000 {
		clear(b.logged)
	}
	b.logged[kind] = now
	return false
}

func (b *Bot) logf(format string, a ...any) {
	line := redact.String(fmt.Sprintf(format, a...))
	fmt.Fprintf(b.opts.Log, "%s telegram: %s\n", b.opts.Now().UTC().Format(time.RFC3339), line)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// askedRE is the head of a question notice (noticeText): "❓ SESSION · TASK asks:".
var askedRE = regexp.MustCompile(`^❓ (\S+) · (t\d+) asks:`)

// askedBy reads the session and task a question notice's text names.
func askedBy(text string) (session, taskID string, ok bool) {
	m := askedRE.FindStringSubmatch(text)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}
