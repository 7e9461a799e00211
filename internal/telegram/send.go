package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"ralph/internal/redact"
)

// target is where a message goes: a chat, maybe a forum topic in it, and
// the message it answers (in a group).
type target struct {
	chat    int64
	thread  int
	replyTo int
	// who is the person the message came from (@name, or the user id),
	// recorded with the commands it gives.
	who string
}

// address is the target as a task keeps it (serve's reply_to): the chat,
// and the topic after a colon.
func (t target) address() string {
	if t.thread != 0 {
		return fmt.Sprintf("%d:%d", t.chat, t.thread)
	}
	return strconv.FormatInt(t.chat, 10)
}

func parseAddress(s string) (target, bool) {
	c, th, topic := strings.Cut(s, ":")
	chat, err := strconv.ParseInt(c, 10, 64)
	if err != nil || chat == 0 {
		return target{}, false
	}
	t := target{chat: chat}
	if topic {
		if t.thread, err = strconv.Atoi(th); err != nil {
			return target{}, false
		}
	}
	return t, true
}

// Back-off of the Bot API calls.
const (
	sendAttempts = 8
	firstBackoff = time.Second
	maxBackoff   = time.Minute
)

// send delivers text to `to`, split into messages Telegram takes, the
// markup under the last; it returns the ids of the messages sent. Every
// text is masked first: titles, summaries and questions come from people
// and agents.
func (b *Bot) send(ctx context.Context, to target, text string, markup models.ReplyMarkup) []int {
	ids, err := b.sendAll(ctx, to, text, markup)
	if err != nil {
		b.logf("a message to chat %d was not delivered: %s", to.chat, describe(err))
	}
	return ids
}

// sendAll is send that returns the failure of a part (after its retries)
// instead of logging it.
func (b *Bot) sendAll(ctx context.Context, to target, text string, markup models.ReplyMarkup) ([]int, error) {
	parts := Split(redact.String(text), MaxMessage)
	var ids []int
	for i, p := range parts {
		params := &bot.SendMessageParams{ChatID: to.chat, MessageThreadID: to.thread, Text: p,
			LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()}}
		if i == 0 && to.replyTo != 0 {
			params.ReplyParameters = &models.ReplyParameters{MessageID: to.replyTo, AllowSendingWithoutReply: true}
		}
		if i == len(parts)-1 && markup != nil {
			params.ReplyMarkup = markup
		}
		var msg *models.Message
		err := b.retry(ctx, "sendMessage", func(ctx context.Context) error {
			var err error
			msg, err = b.api.SendMessage(ctx, params)
			return err
		})
		if err != nil {
			return ids, err
		}
		ids = append(ids, msg.ID)
	}
	return ids, nil
}

// edit replaces a message's text (and drops its buttons).
func (b *Bot) edit(ctx context.Context, chat int64, msgID int, text string) {
	parts := Split(redact.String(text), MaxMessage)
	if len(parts) == 0 {
		return
	}
	err := b.retry(ctx, "editMessageText", func(ctx context.Context) error {
		_, err := b.api.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: msgID,
			Text: parts[0], LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()}})
		return err
	})
	if err != nil && !strings.Contains(err.Error(), "message is not modified") {
		b.logf("edit of message %d in chat %d: %s", msgID, chat, describe(err))
	}
}

// answerCallback ends a button's spinner on the person's phone.
func (b *Bot) answerCallback(ctx context.Context, id, text string) {
	err := b.retry(ctx, "answerCallbackQuery", func(ctx context.Context) error {
		_, err := b.api.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text})
		return err
	})
	if err != nil {
		b.logf("answer to a button press: %s", describe(err))
	}
}

// retry calls fn until it succeeds, fails for good (a refusal that
// another try would not change), or sendAttempts tries have failed:
// network errors and 5xx back off exponentially, a 429 waits what its
// retry_after says.
func (b *Bot) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil || permanent(err) || ctx.Err() != nil || attempt >= sendAttempts {
			return err
		}
		wait := backoff
		var tm *bot.TooManyRequestsError
		if errors.As(err, &tm) {
			wait = time.Duration(max(tm.RetryAfter, 1)) * time.Second
		} else {
			backoff = min(2*backoff, maxBackoff)
		}
		b.logf("%s: %s; again in %s", what, describe(err), wait)
		if err := b.opts.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// retryForever is retry without a last attempt, for what the bot cannot
// work without; false when ctx ended first.
func (b *Bot) retryForever(ctx context.Context, what string, fn func(context.Context) error) bool {
	backoff := firstBackoff
	for {
		err := fn(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		wait := backoff
		var tm *bot.TooManyRequestsError
		if errors.As(err, &tm) {
			wait = time.Duration(max(tm.RetryAfter, 1)) * time.Second
		}
		backoff = min(2*backoff, 5*time.Minute)
		b.logf("%s: %s; again in %s", what, describe(err), wait)
		if b.opts.Sleep(ctx, wait) != nil {
			return false
		}
	}
}

// permanent tells a refusal from a failure worth another try.
func permanent(err error) bool {
	for _, e := range []error{bot.ErrorBadRequest, bot.ErrorForbidden, bot.ErrorUnauthorized, bot.ErrorNotFound, bot.ErrorConflict} {
		if errors.Is(err, e) {
			return true
		}
	}
	return bot.IsMigrateError(err) || errors.Is(err, context.Canceled)
}

// describe is an error of the Bot API fit for the log: masked (the
// library's errors may hold the URL, and the URL the token), short, and
// never a body that may hold people's messages.
func describe(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, bot.ErrorUnauthorized):
		return "the Bot API refused the token (401 Unauthorized): check " + EnvToken
	case errors.Is(err, bot.ErrorConflict):
		return "conflict (409): another program polls with this token, or a webhook is set"
	case strings.Contains(msg, "error decode response body"):
		return "the Bot API's reply was not JSON"
	}
	return clip(redact.String(msg), 300)
}

// pollError is the library's error handler (its polling loop backs off up
// to 5s by itself, without reading retry_after): logged at most once a
// minute, with how many were kept quiet.
func (b *Bot) pollError(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	now := b.opts.Now()
	b.mu.Lock()
	if !b.pollLogged.IsZero() && now.Sub(b.pollLogged) < time.Minute {
		b.pollQuiet++
		b.mu.Unlock()
		return
	}
	quiet := b.pollQuiet
	b.pollLogged, b.pollQuiet = now, 0
	b.mu.Unlock()
	msg := describe(err)
	if quiet > 0 {
		msg += fmt.Sprintf(" (and %d more since the last report)", quiet)
	}
	b.logf("polling: %s; retrying", msg)
}
