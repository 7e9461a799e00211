package telegram

import (
	"context"
	"slices"

	"github.com/go-telegram/bot/models"

	"ralph/internal/serve"
)

// Notify implements serve.Notifier. The daemon calls it holding its lock,
// so it only queues the notice; a full queue (Telegram out of reach for
// long) drops it with a line in the log — the log has every notice.
func (b *Bot) Notify(n serve.Notice) {
	select {
	case b.notices <- n:
	default:
		b.logf("notice queue full: a %s notice of task %s is not sent", n.Kind, n.TaskID)
	}
}

// dispatchNotices hands each notice to its session's mailbox, after the
// replies to the commands that came before it.
func (b *Bot) dispatchNotices(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-b.notices:
			b.boxes.post(n.Session, func(ctx context.Context) { b.deliver(ctx, n) })
		}
	}
}

// deliver sends a notice to the chat that started the task; a task from
// elsewhere (the CLI) is told to the first allowed chat. A question is a
// message the person answers by replying to it: its message ids are kept
// with the task.
func (b *Bot) deliver(ctx context.Context, n serve.Notice) {
	to, ok := b.noticeTarget(n)
	if !ok {
		return
	}
	if n.Kind == serve.NoticeUsageLimit && !b.newLimit(n) {
		return // the same wait, seen again
	}
	var markup models.ReplyMarkup = keyboard(noticeButtons(n))
	if n.Kind == serve.NoticeQuestion {
		markup = &models.ForceReply{ForceReply: true, InputFieldPlaceholder: "your answer to " + n.TaskID}
	}
	ids := b.send(ctx, to, noticeText(n, b.opts.Now()), markup)
	if n.Kind != serve.NoticeQuestion {
		return
	}
	for _, id := range ids {
		if err := b.store.addQuestion(to.chat, id, n.TaskID, n.Session, b.opts.Now()); err != nil {
			b.logf("task %s: the question message %d is not remembered (%v): answer with /ralph answer %s", n.TaskID, id, err, n.Session)
		}
	}
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
