package telegram

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-telegram/bot/models"

	"ralph/internal/serve"
)

// Channel implements serve.Named: the daemon's outbox records the
// notices delivered to the chat under this name.
func (b *Bot) Channel() string { return "telegram" }

// Notify implements serve.Notifier: Deliver, waiting for the bot to run,
// its failure only logged. The daemon's outbox calls Deliver instead.
func (b *Bot) Notify(n serve.Notice) {
	if err := b.Deliver(context.Background(), n); err != nil {
		b.logf("a %s notice of task %s is not sent: %v", n.Kind, n.TaskID, err)
	}
}

// Deliver implements serve.Deliverer: the notice is sent in its session's
// mailbox, after the replies to the commands that came before it. An
// error (Telegram out of reach after the retries, the bot not running
// before ctx ends) makes the daemon's outbox try again later; a refusal
// is logged and not tried again.
func (b *Bot) Deliver(ctx context.Context, n serve.Notice) error {
	select {
	case <-b.running:
	case <-ctx.Done():
		return errors.New("the bot is not running yet")
	}
	res := make(chan error, 1)
	b.boxes.post(n.Session, func(ctx context.Context) { res <- b.deliver(ctx, n) })
	select {
	case err := <-res:
		return err
	case <-b.ctx.Done():
		return errors.New("the bot has stopped")
	case <-ctx.Done():
		// The job may still run: the id it records keeps the next try
		// from sending it twice.
		return ctx.Err()
	}
}

// deliver sends a notice to the chat that started the task; a task from
// elsewhere (the CLI) is told to the first allowed chat. A question is a
// message the person answers by replying to it: its message ids are kept
// with the task. A notice whose id was sent before is not sent again.
func (b *Bot) deliver(ctx context.Context, n serve.Notice) error {
	to, ok := b.noticeTarget(n)
	if !ok {
		return nil
	}
	if n.ID != "" {
		if sent, err := b.store.noticeSent(n.ID); err != nil || sent {
			return err
		}
	}
	if n.Kind == serve.NoticeUsageLimit && !b.newLimit(n) {
		return nil // the same wait, seen again
	}
	if n.Kind == serve.NoticeBudget {
		return b.deliverEverywhere(ctx, n)
	}
	var markup models.ReplyMarkup = keyboard(noticeButtons(n))
	if n.Kind == serve.NoticeQuestion {
		markup = &models.ForceReply{ForceReply: true, InputFieldPlaceholder: "your answer to " + n.TaskID}
	}
	ids, err := b.sendAll(ctx, to, noticeText(n, b.opts.Now()), markup)
	if err != nil {
		if !permanent(err) {
			if n.Kind == serve.NoticeUsageLimit {
				b.forgetLimit(n)
			}
			return fmt.Errorf("chat %d: %s", to.chat, describe(err))
		}
		b.logf("a message to chat %d was not delivered: %s", to.chat, describe(err))
		return nil
	}
	if n.ID != "" {
		if err := b.store.markNotice(n.ID, b.opts.Now()); err != nil {
			b.logf("task %s: the %s notice %s is not remembered as sent (%v)", n.TaskID, n.Kind, n.ID, err)
		}
	}
	if n.Kind != serve.NoticeQuestion {
		return nil
	}
	for _, id := range ids {
		if err := b.store.addQuestion(to.chat, id, n.TaskID, n.Session, b.opts.Now()); err != nil {
			b.logf("task %s: the question message %d is not remembered (%v): answer with /ralph answer %s", n.TaskID, id, err, n.Session)
		}
	}
	b.noteAsked()
	return nil
}

// deliverEverywhere sends a notice of the whole fleet (a budget's
// warning) to every allowed chat.
func (b *Bot) deliverEverywhere(ctx context.Context, n serve.Notice) error {
	for _, chat := range b.cfg.AllowedChats {
		if _, err := b.sendAll(ctx, target{chat: chat}, noticeText(n, b.opts.Now()), nil); err != nil {
			if !permanent(err) {
				return fmt.Errorf("chat %d: %s", chat, describe(err))
			}
			b.logf("a message to chat %d was not delivered: %s", chat, describe(err))
		}
	}
	if n.ID != "" {
		if err := b.store.markNotice(n.ID, b.opts.Now()); err != nil {
			b.logf("the %s notice %s is not remembered as sent (%v)", n.Kind, n.ID, err)
		}
	}
	return nil
}

func (b *Bot) noticeTarget(n serve.Notice) (target, bool) {
	if n.Origin == origin {
		if t, ok := parseAddress(n.ReplyTo); ok {
			if !slices.Contains(b.cfg.AllowedChats, t.chat) {
				b.logf("task %s: its chat %d is no longer allowed; the %s notice is not sent", n.TaskID, t.chat, n.Kind)
				return target{}, false
			}
			return t, true
		}
	}
	return target{chat: b.cfg.AllowedChats[0]}, true
}

// newLimit says whether a usage-limit notice tells something new: the
// engine may report the same wait more than once.
func (b *Bot) newLimit(n serve.Notice) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if last, ok := b.limitsSent[n.TaskID]; ok && last.Equal(n.Until) {
		return false
	}
	if len(b.limitsSent) > 1000 {
		clear(b.limitsSent)
	}
	b.limitsSent[n.TaskID] = n.Until
	return true
}

// forgetLimit undoes newLimit for a wait whose notice did not get through.
func (b *Bot) forgetLimit(n serve.Notice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if last, ok := b.limitsSent[n.TaskID]; ok && last.Equal(n.Until) {
		delete(b.limitsSent, n.TaskID)
	}
}
