package requests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// SlackInteractivePath is where Slack delivers button presses (the app's
// Interactivity Request URL), signed as the events are.
const SlackInteractivePath = "/webhooks/slack/interactive"

// A gate message's buttons: each carries the task and the item
// ("t3|a1"; an option's also its index, "t3|q2|0"), so a press on an
// earlier task's message decides nothing.
const (
	actionAllow     = "ralph_allow"
	actionAllowTask = "ralph_allow_task"
	actionDeny      = "ralph_deny"
	actionAnswer    = "ralph_answer_" // + the option's index
)

// Slack's limits on a button (its text) and a section's text.
const (
	maxButtonText  = 75
	maxSectionText = 3000
)

var slackWho = regexp.MustCompile(`slack:([UW][A-Z0-9]{2,20})\b`)

// slackMentions turns "slack:U123" in escaped text into a mention, which
// Slack shows as the person's name.
func slackMentions(text string) string { return slackWho.ReplaceAllString(text, "<@$1>") }

// slackGateText is a pending item in words: the message's text where
// blocks are not shown (notifications).
func slackGateText(it serve.PendingItem) string {
	if it.Kind == "question" {
		return fmt.Sprintf("❓ The agent asks (%s): %s", it.ID, it.What)
	}
	return fmt.Sprintf("🔐 The agent asks to run %s (%s)", it.What, it.ID)
}

func section(text string) *slack.SectionBlock {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, clip(text, maxSectionText), false, true), nil, nil)
}

func button(actionID, value, label, style string) *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(actionID, value, slack.NewTextBlockObject(slack.PlainTextType, clip(label, maxButtonText), true, false))
	b.Style = slack.Style(style)
	return b
}

// slackGateBlocks is a pending item with its buttons: Allow once, Allow
// for this task and Deny for a tool call; its options for a question.
func slackGateBlocks(task string, it serve.PendingItem) []slack.Block {
	value := task + "|" + it.ID
	if it.Kind == "question" {
		text := slackText(fmt.Sprintf("❓ **The agent asks** (%s), and waits inside its call for the answer:", it.ID)) + "\n>" + slackText(it.What)
		blocks := []slack.Block{section(text)}
		var opts []slack.BlockElement
		for i, o := range it.Options {
			opts = append(opts, button(actionAnswer+strconv.Itoa(i), value+"|"+strconv.Itoa(i), o, ""))
		}
		if len(opts) > 0 {
			blocks = append(blocks, slack.NewActionBlock("ralph_gate_"+it.ID, opts...))
		}
		return append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, "Reply in this thread to answer in your own words.", false, false)))
	}
	text := slackText(fmt.Sprintf("🔐 **The agent asks to run** `%s` (%s), and waits inside its call for a decision.", strings.ReplaceAll(it.What, "`", "'"), it.ID))
	return []slack.Block{section(text), slack.NewActionBlock("ralph_gate_"+it.ID,
		button(actionAllow, value, "✅ Allow once", "primary"),
		button(actionAllowTask, value, "☑️ Allow for this task", ""),
		button(actionDeny, value, "⛔ Deny", "danger"))}
}

// slackDoneBlocks replace an item's buttons with what became of it.
func slackDoneBlocks(text string) []slack.Block { return []slack.Block{section(text)} }

// PostBlocks posts a message with blocks in the request's thread, once
// per marker (as Post).
func (c *slackSide) PostBlocks(ctx context.Context, r Request, marker, text string, blocks []slack.Block) (string, error) {
	st := c.store()
	name := "slack-posted:" + r.Key + ":" + marker
	if ts := st.Cursor(name); ts != "" {
		return ts, nil
	}
	var ts string
	err := c.retry(ctx, func() (err error) {
		_, ts, err = c.api.PostMessageContext(ctx, r.Channel, slack.MsgOptionText(slackText(text), false),
			slack.MsgOptionBlocks(blocks...), slack.MsgOptionTS(r.Thread), slack.MsgOptionDisableMediaUnfurl())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack chat.postMessage: %w", err)
	}
	return ts, st.SetCursor(name, ts)
}

// EditBlocks rewrites a message ralph posted, blocks and all (text is
// escaped already).
func (c *slackSide) EditBlocks(ctx context.Context, r Request, ref, text string, blocks []slack.Block) error {
	err := c.retry(ctx, func() error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, r.Channel, ref, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
	if err != nil {
		return fmt.Errorf("slack chat.update: %w", err)
	}
	return nil
}

// Ephemeral tells one person something in the thread that only they see.
func (c *slackSide) Ephemeral(ctx context.Context, channel, thread, user, text string) error {
	err := c.retry(ctx, func() error {
		opts := []slack.MsgOption{slack.MsgOptionText(slackText(text), false)}
		if thread != "" {
			opts = append(opts, slack.MsgOptionTS(thread))
		}
		_, err := c.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("slack chat.postEphemeral: %w", err)
	}
	return nil
}

// slackAllowed says whether a Slack user may steer requests (decide what
// their agents wait on): RALPH_SLACK_USERS, or anyone when it is empty.
func slackAllowed(cfg SlackConfig, user string) bool {
	return user != "" && (len(cfg.Users) == 0 || slices.Contains(cfg.Users, user))
}

// notAllowed is what a stranger is told.
const notAllowed = "Only this request's allowed users steer it and decide what its agent waits on: nothing was done."

// slackInteractive takes Slack's button presses (block_actions), form
// encoded as payload=JSON: verified as the events are (forged, unsigned
// or stale: 401, nothing done), then carried out.
func (s *Service) slackInteractive(w http.ResponseWriter, r *http.Request) {
	body, ok := s.slackVerified(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		http.Error(w, "no payload", http.StatusBadRequest)
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		http.Error(w, "unreadable payload", http.StatusBadRequest)
		return
	}
	if err := s.slackPress(r.Context(), cb); err != nil {
		s.logf("slack press: %v", err)
	}
	w.WriteHeader(http.StatusOK)
}

// press is a gate button's action, read from a block_actions payload.
type press struct {
	action, task, item string
	option             int // an answer's option; -1 for none
}

func readPress(a *slack.BlockAction) (press, bool) {
	parts := strings.Split(a.Value, "|")
	if len(parts) < 2 || parts[0] == "" || !itemID.MatchString(parts[1]) {
		return press{}, false
	}
	p := press{action: a.ActionID, task: parts[0], item: parts[1], option: -1}
	switch {
	case a.ActionID == actionAllow || a.ActionID == actionAllowTask || a.ActionID == actionDeny:
		return p, len(parts) == 2 && p.item[0] == 'a'
	case strings.HasPrefix(a.ActionID, actionAnswer) && len(parts) == 3:
		n, err := strconv.Atoi(parts[2])
		p.option = n
		return p, err == nil && n >= 0 && p.item[0] == 'q'
	}
	return press{}, false
}

// slackPress carries out the gate buttons of a block_actions payload: for
// the request of the message's thread, by one of its allowed users, for
// the task it was posted for; anyone else is told, only they see, that
// nothing was done.
func (s *Service) slackPress(ctx context.Context, cb slack.InteractionCallback) error {
	if cb.Type != slack.InteractionTypeBlockActions || s.slack == nil || s.d == nil {
		return nil
	}
	channel := cb.Container.ChannelID
	if channel == "" {
		channel = cb.Channel.ID
	}
	thread := cb.Container.ThreadTs
	if thread == "" {
		thread = cb.Message.ThreadTimestamp
	}
	user := cb.User.ID
	for _, a := range cb.ActionCallback.BlockActions {
		p, ok := readPress(a)
		if !ok {
			continue
		}
		r, err := s.store.Get("slack:" + channel + "/" + thread)
		if err != nil {
			return nil // not a request's thread
		}
		tell := func(text string) error { return s.slack.Ephemeral(ctx, channel, thread, user, text) }
		if !slackAllowed(s.cfg.Slack, user) {
			s.logf("%s: a press on %s by %s, who may not decide: ignored", r.Key, p.item, user)
			return tell(notAllowed)
		}
		v, err := s.d.Status(r.Session)
		if err != nil || v.ID != p.task {
			return tell("That message is about an earlier task of this request: nothing was done.")
		}
		parsed := Parsed{Cmd: CmdApprove, Item: p.item, ForTask: p.action == actionAllowTask}
		switch {
		case p.action == actionDeny:
			parsed.Cmd = CmdDeny
		case p.option >= 0:
			parsed.Cmd = CmdAnswer
			i := slices.IndexFunc(v.Pending, func(it serve.PendingItem) bool { return it.ID == p.item })
			if i < 0 || p.option >= len(v.Pending[i].Options) {
				return tell(fmt.Sprintf("Question %s no longer waits for an answer: nothing was done.", p.item))
			}
			parsed.Text = v.Pending[i].Options[p.option]
		}
		c, it, why := gateVerb(v, parsed)
		if why != "" {
			return tell(why + " Nothing was done.")
		}
		who := fleet.Who{Surface: fleet.SurfaceSlack, User: user}
		c.Session, c.Who = r.Session, who
		if _, err := s.d.Do(ctx, c); err != nil {
			var fe *fleet.Error
			if errors.As(err, &fe) {
				return tell(fe.Msg + ".")
			}
			return err
		}
		s.logf("%s: %s %s by %s (button)", r.Key, c.Verb, it.ID, who)
		return s.gateDone(ctx, r, v.ID, it.ID, decidedText(c, it, who))
	}
	return nil
}

// strangerInThread tells someone who may not steer requests, and who
// wrote in a request's thread a command, or anything while its agent
// waits for a person, that it did nothing; other chatter is ignored.
func (s *Service) strangerInThread(ctx context.Context, m slackMsg, self string) error {
	if m.User == "" || m.BotID != "" || m.User == self || m.ThreadTS == "" || slackAllowed(s.cfg.Slack, m.User) {
		return nil
	}
	r, err := s.store.Get("slack:" + m.Channel + "/" + m.ThreadTS)
	if err != nil {
		return nil
	}
	text := strings.TrimSpace(strings.ReplaceAll(m.Text, "<@"+self+">", ""))
	if Parse(text).Cmd == NoCommand {
		if s.d == nil {
			return nil
		}
		v, err := s.d.Status(r.Session)
		if err != nil || v.State != fleet.Waiting || len(v.Pending) == 0 && len(v.Questions) == 0 {
			return nil
		}
	}
	// A mention comes as app_mention and as message: told once.
	if first, err := s.store.Delivery("slack-told:"+m.Channel+"/"+m.TS, s.opts.Now()); err != nil || !first {
		return err
	}
	s.logf("%s: %s, who may not steer requests, wrote in the thread: ignored", r.Key, m.User)
	return s.slack.Ephemeral(ctx, m.Channel, m.ThreadTS, m.User, notAllowed)
}
