package telegram

import (
	"context"
	"fmt"
	"strings"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// origin is what a task started from a chat says it came from.
const origin = "telegram"

// do carries out a command and replies to it. It runs in the session's
// mailbox.
func (b *Bot) do(ctx context.Context, to target, cmd Command) {
	f, now := b.fleet, b.opts.Now()
	var v serve.TaskView
	var err error
	var text, lead string
	var buttons []button
	show := func(view serve.TaskView, e error) { // a reply about one task
		v, err = view, e
		if e == nil {
			text, buttons = taskText(v, now), taskButtons(v)
		}
	}
	switch cmd.Verb {
	case Help:
		text = helpText(cmd.Problem, cmd.Usage)
		if cmd.Usage != "" && strings.Contains(cmd.Usage, " N") {
			text += "\n" + b.knownSessions()
		}
	case Start:
		c := fleet.Command{Verb: fleet.Start, Session: cmd.Session, Title: cmd.Title, Origin: origin, ReplyTo: to.address(), Who: to.person()}
		lead = "🆕 task created; it waits for a loop."
		if cmd.Max > 0 {
			c.Verb, c.MaxLoops, lead = fleet.StartLoop, cmd.Max, fmt.Sprintf("🆕 task created and looping, at most %d iterations.", cmd.Max)
		}
		show(f.Do(ctx, c))
	case Loop:
		show(f.Do(ctx, fleet.Command{Verb: fleet.Loop, Session: cmd.Session, MaxLoops: cmd.Max, Who: to.person()}))
	case Status:
		if cmd.Session == "" {
			text, err = b.listReply()
		} else {
			show(f.Status(cmd.Session))
		}
	case List:
		text, err = b.listReply()
	case Stop:
		show(f.Do(ctx, fleet.Command{Verb: fleet.Stop, Session: cmd.Session, Who: to.person()}))
		if err == nil && (v.State == fleet.Running || v.State == fleet.Queued) {
			lead = "⏹ stopping after the current iteration."
			buttons = nil
		}
	case Cancel:
		show(f.Do(ctx, fleet.Command{Verb: fleet.Cancel, Session: cmd.Session, Who: to.person()}))
	case Reset:
		show(f.Do(ctx, fleet.Command{Verb: fleet.Reset, Session: cmd.Session, Who: to.person()}))
		lead = "🔁 circuit breaker reset."
	case Retry:
		show(f.Do(ctx, fleet.Command{Verb: fleet.Retry, Session: cmd.Session, MaxLoops: cmd.Max, Who: to.person()}))
		lead = "🔁 circuit breaker reset; looping again."
	case Pause:
		show(f.Do(ctx, fleet.Command{Verb: fleet.Pause, Session: cmd.Session, Who: to.person()}))
		lead = "⏸ paused: the loop holds before its next iteration."
	case Resume:
		show(f.Do(ctx, fleet.Command{Verb: fleet.Resume, Session: cmd.Session, Who: to.person()}))
		lead = "▶️ resumed."
	case Answer:
		show(f.Do(ctx, fleet.Command{Verb: fleet.Answer, Session: cmd.Session, Text: cmd.Text, Who: to.person()}))
		lead = "✍️ answer recorded; the loop resumes."
	case Circuit:
		v, err = f.Status(cmd.Session)
		if err == nil {
			text = circuitText(v)
			if v.CircuitBreaker.State != "" && v.CircuitBreaker.State != "CLOSED" {
				if bt, ok := newButton("🔁 Reset breaker", actReset, v.ID, v.Session); ok {
					buttons = []button{bt}
				}
			}
		}
	case Watchdog:
		text = watchdogText(f.Watchdog(), now)
	}
	if err != nil {
		text, buttons, lead = errorText(err), nil, ""
	}
	if lead != "" {
		text = lead + "\n" + text
	}
	b.send(ctx, to, text, keyboard(buttons))
}

func (b *Bot) listReply() (string, error) {
	views, err := b.fleet.List()
	if err != nil {
		return "", err
	}
	sessions, err := b.fleet.Sessions()
	if err != nil {
		return "", err
	}
	return listText(views, sessions), nil
}

func (b *Bot) knownSessions() string {
	all, err := b.fleet.Sessions()
	if err != nil || len(all) == 0 {
		return "no sessions are registered"
	}
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name
	}
	return "sessions: " + strings.Join(names, ", ")
}

// press acts on a button, if its task is still the session's; the
// message loses its buttons and says what was done, so a second press
// does nothing.
func (b *Bot) press(ctx context.Context, to target, queryID string, msgID int, msgText string, p press) {
	f, now := b.fleet, b.opts.Now()
	cur, err := f.Status(p.session)
	if err != nil || cur.ID != p.taskID {
		b.answerCallback(ctx, queryID, fmt.Sprintf("Task %s is no longer session %s's.", p.taskID, p.session))
		return
	}
	b.answerCallback(ctx, queryID, p.label()+"…")
	var v serve.TaskView
	c := fleet.Command{Session: p.session, Who: to.person()}
	switch p.act {
	case actStop:
		c.Verb = fleet.Stop
	case actReset:
		c.Verb = fleet.Reset
	case actLoop10:
		c.Verb, c.MaxLoops = fleet.Loop, buttonMoreLoops
	case actAllow:
		c.Verb, c.Item = fleet.Approve, p.item
	case actAllowTask:
		c.Verb, c.Item, c.ForTask = fleet.Approve, p.item, true
	case actDeny:
		c.Verb, c.Item = fleet.Deny, p.item
	}
	v, err = f.Do(ctx, c)
	if msgText != "" {
		b.edit(ctx, to.chat, msgID, msgText+"\n\n→ "+p.label())
	}
	if err != nil {
		b.send(ctx, to, errorText(err), nil)
		return
	}
	b.send(ctx, to, taskText(v, now), keyboard(taskButtons(v)))
}

// answer gives a reply to a question message to the task that asked it,
// if that task still waits for an answer.
func (b *Bot) answer(ctx context.Context, to target, taskID, session, text string) {
	f := b.fleet
	cur, err := f.Status(session)
	switch {
	case err != nil:
		b.send(ctx, to, errorText(err), nil)
		return
	case cur.ID != taskID:
		b.send(ctx, to, fmt.Sprintf("⚠️ That question was task %s's; session %s is on task %s now.", taskID, session, cur.ID), nil)
		return
	case len(cur.Questions) == 0:
		b.send(ctx, to, fmt.Sprintf("⚠️ Task %s has no open question (answered already?).", taskID), nil)
		return
	}
	v, err := f.Do(ctx, fleet.Command{Verb: fleet.Answer, Session: session, Text: text, Who: to.person()})
	if err != nil {
		b.send(ctx, to, errorText(err), nil)
		return
	}
	b.send(ctx, to, "✍️ answer recorded; the loop resumes.\n"+taskText(v, b.opts.Now()), keyboard(taskButtons(v)))
}

// person is who gave a command in the chat, as its record names them.
func (t target) person() fleet.Who {
	return fleet.Who{Surface: fleet.SurfaceTelegram, User: t.who}
}
