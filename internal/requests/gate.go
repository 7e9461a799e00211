package requests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// A request's agent may wait inside its call for a person (the gate:
// docs/serve.md): each pending approval or question is posted in the
// request's thread once, with its id and how to decide it — Slack's
// buttons, GitHub's "/ralph approve ID" commands. Only the request's
// responders (writers of the repository, the allowed Slack users) decide;
// a decision goes through the daemon's one command path (Daemon.Do) with
// who made it, which the iteration's receipt keeps. Once an item is no
// longer pending its message says so: who decided what, where ralph
// carried the decision out, or that it was decided elsewhere or timed out.

// gatePost is one pending item posted in a request's thread.
type gatePost struct {
	Task string `json:"task"`
	Item string `json:"item"`
	Kind string `json:"kind"`
	What string `json:"what"`
	Ref  string `json:"ref"` // the message's ts, the comment's id
	// Done is what the message says now that nothing waits on it.
	Done string `json:"done,omitempty"`
}

// goneText is what an item's message says once nothing waits on it and
// ralph did not carry out the decision itself.
const goneText = "no longer waiting: decided elsewhere, or nobody decided in time"

// maxGatePosts bounds what a request remembers of its posted items.
const maxGatePosts = 50

func gatePostsName(key string) string { return "gate-posts:" + key }

func (s *Service) gatePosts(key string) []gatePost {
	var ps []gatePost
	_ = json.Unmarshal([]byte(s.store.Cursor(gatePostsName(key))), &ps)
	return ps
}

func (s *Service) saveGatePosts(key string, ps []gatePost) error {
	if len(ps) > maxGatePosts {
		ps = ps[len(ps)-maxGatePosts:]
	}
	b, err := json.Marshal(ps)
	if err != nil {
		return err
	}
	return s.store.SetCursor(gatePostsName(key), string(b))
}

// samePost says whether p is the post of item it on task: ids start again
// at a1 after a daemon restart, so the item's words tell them apart.
func samePost(p gatePost, task string, it serve.PendingItem) bool {
	return p.Task == task && p.Item == it.ID && p.What == it.What
}

// gateSync posts the task's pending items not yet posted and closes the
// messages of the ones no longer pending.
func (s *Service) gateSync(ctx context.Context, r Request, v serve.TaskView) error {
	s.gateMu.Lock()
	defer s.gateMu.Unlock()
	ps := s.gatePosts(r.Key)
	changed := false
	for _, it := range v.Pending {
		if slices.ContainsFunc(ps, func(p gatePost) bool { return samePost(p, v.ID, it) }) {
			continue
		}
		ref, err := s.postGate(ctx, r, v.ID, it)
		if err != nil {
			return err
		}
		ps = append(ps, gatePost{Task: v.ID, Item: it.ID, Kind: it.Kind, What: it.What, Ref: ref})
		changed = true
		s.logf("%s: %s %s posted (%s)", r.Key, it.Kind, it.ID, it.What)
	}
	for i, p := range ps {
		if p.Done != "" || slices.ContainsFunc(v.Pending, func(it serve.PendingItem) bool { return v.ID == p.Task && it.ID == p.Item && it.What == p.What }) {
			continue
		}
		ps[i].Done = goneText
		if err := s.editGate(ctx, r, p, ps[i].Done); err != nil {
			return err
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return s.saveGatePosts(r.Key, ps)
}

// gateDone rewrites the message of item (of task) to say done, as ralph
// carried out a decision made in the thread.
func (s *Service) gateDone(ctx context.Context, r Request, task, item, done string) error {
	s.gateMu.Lock()
	defer s.gateMu.Unlock()
	ps := s.gatePosts(r.Key)
	for i := len(ps) - 1; i >= 0; i-- {
		// A pass that saw the item gone may have come between the
		// decision and this: who decided is still the better word.
		if ps[i].Task != task || ps[i].Item != item || ps[i].Done != "" && ps[i].Done != goneText {
			continue
		}
		ps[i].Done = done
		if err := s.editGate(ctx, r, ps[i], done); err != nil {
			return err
		}
		return s.saveGatePosts(r.Key, ps)
	}
	return nil
}

func gateMarker(r Request, task string, it serve.PendingItem) string {
	return fmt.Sprintf("<!-- ralph:gate:%s:%s:%s:%08x -->", r.Key, task, it.ID, hash32(it.What))
}

// hash32 is FNV-1a: a marker's short name for an item's words.
func hash32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// postGate posts one pending item: Slack with its buttons, GitHub as a
// comment listing the commands.
func (s *Service) postGate(ctx context.Context, r Request, task string, it serve.PendingItem) (string, error) {
	marker := gateMarker(r, task, it)
	if r.Source == "slack" && s.slack != nil && s.convFor == nil {
		return s.slack.PostBlocks(ctx, r, marker, slackGateText(it), slackGateBlocks(task, it))
	}
	return s.conv(r).Post(ctx, r, marker, githubGateText(it))
}

// editGate says on an item's message that nothing waits on it any more.
func (s *Service) editGate(ctx context.Context, r Request, p gatePost, done string) error {
	if p.Ref == "" {
		return nil
	}
	if r.Source == "slack" && s.slack != nil && s.convFor == nil {
		text := slackText(p.Item+" "+p.What+" — ") + slackMentions(slackText(done))
		return s.slack.EditBlocks(ctx, r, p.Ref, text, slackDoneBlocks(text))
	}
	marker := gateMarker(r, p.Task, serve.PendingItem{ID: p.Item, What: p.What})
	return s.conv(r).Edit(ctx, r, p.Ref, marker, fmt.Sprintf("**Decided:** %s %s — %s", p.Item, codeSpan(p.What), done))
}

// codeSpan is s as a Markdown code span that s cannot close.
func codeSpan(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

// githubGateText is a pending item as a comment: its id and the commands
// that decide it.
func githubGateText(it serve.PendingItem) string {
	var b strings.Builder
	if it.Kind == "question" {
		fmt.Fprintf(&b, "❓ The agent asks (%s), and waits inside its call for the answer:\n\n> %s\n", it.ID, strings.ReplaceAll(it.What, "\n", " "))
		if len(it.Options) > 0 {
			b.WriteString("\nOptions: ")
			for i, o := range it.Options {
				if i > 0 {
					b.WriteString(" / ")
				}
				b.WriteString(codeSpan(o))
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\nReply here with the answer, or `/ralph answer %s TEXT`.", it.ID)
		return b.String()
	}
	fmt.Fprintf(&b, "🔐 The agent asks to run %s (%s), and waits inside its call for a decision. Reply with:\n\n", codeSpan(it.What), it.ID)
	fmt.Fprintf(&b, "- `/ralph approve %s` — allow it once\n", it.ID)
	fmt.Fprintf(&b, "- `/ralph approve %s --task` — allow this exact call for the rest of the task\n", it.ID)
	fmt.Fprintf(&b, "- `/ralph deny %s [reason]` — refuse it; the agent reads the reason\n", it.ID)
	b.WriteString("\nOnly people with write access decide; without a decision in time it is denied.")
	return b.String()
}

// gateCommand carries out a gate command from the thread (by who, in
// entry e); what cannot be done is said in the thread.
func (s *Service) gateCommand(ctx context.Context, r Request, e Entry, p Parsed, who fleet.Who) error {
	reply := func(text string) error {
		_, err := s.conv(r).Post(ctx, r, "<!-- ralph:gate-reply:"+r.Key+":"+e.ID+" -->", text)
		return err
	}
	if p.Problem != "" {
		return reply("⚠️ " + p.Problem + ".")
	}
	v, err := s.d.Status(r.Session)
	if err != nil {
		return reply("⚠️ Nothing waits for a decision here: the request has no task.")
	}
	c, it, why := gateVerb(v, p)
	if why != "" {
		return reply("⚠️ " + why)
	}
	c.Session, c.Who = r.Session, who
	if _, err := s.d.Do(ctx, c); err != nil {
		var fe *fleet.Error
		if errors.As(err, &fe) {
			return reply("⚠️ " + fe.Msg + ".")
		}
		return err
	}
	s.logf("%s: %s %s by %s", r.Key, c.Verb, it.ID, who)
	return s.gateDone(ctx, r, v.ID, it.ID, decidedText(c, it, who))
}

// gateVerb is the command p asks of the task v, with the item it is for;
// why says what makes it impossible (no such item pending).
func gateVerb(v serve.TaskView, p Parsed) (fleet.Command, serve.PendingItem, string) {
	find := func(kind, id string) (serve.PendingItem, bool) {
		for _, it := range v.Pending {
			if it.Kind == kind && (id == "" || it.ID == id) {
				return it, true
			}
		}
		return serve.PendingItem{}, false
	}
	switch p.Cmd {
	case CmdApprove, CmdDeny:
		it, ok := find("approval", p.Item)
		if !ok {
			return fleet.Command{}, it, fmt.Sprintf("No tool call %s waits for a decision%s.", p.Item, pendingList(v))
		}
		if p.Cmd == CmdDeny {
			return fleet.Command{Verb: fleet.Deny, Item: it.ID, Text: p.Text}, it, ""
		}
		return fleet.Command{Verb: fleet.Approve, Item: it.ID, ForTask: p.ForTask}, it, ""
	case CmdAnswer:
		it, ok := find("question", p.Item)
		if !ok && (p.Item != "" || len(v.Questions) == 0) {
			return fleet.Command{}, it, strings.Join(strings.Fields("No question "+p.Item+" waits for an answer"), " ") + pendingList(v) + "."
		}
		return fleet.Command{Verb: fleet.Answer, Text: p.Text}, it, ""
	}
	return fleet.Command{}, serve.PendingItem{}, "not a decision"
}

// pendingList names what does wait, for a reply to a command that named
// something else.
func pendingList(v serve.TaskView) string {
	if len(v.Pending) == 0 {
		return ""
	}
	var ids []string
	for _, it := range v.Pending {
		ids = append(ids, it.ID)
	}
	return " (waiting: " + strings.Join(ids, ", ") + ")"
}

// decidedText is what an item's message says once ralph carried out c.
func decidedText(c fleet.Command, it serve.PendingItem, who fleet.Who) string {
	by := who.String()
	switch {
	case c.Verb == fleet.Approve && c.ForTask:
		return "☑️ allowed for this task by " + by
	case c.Verb == fleet.Approve:
		return "✅ allowed once by " + by
	case c.Verb == fleet.Deny && strings.TrimSpace(c.Text) != "":
		return "⛔ denied by " + by + ": " + clip(strings.Join(strings.Fields(c.Text), " "), 200)
	case c.Verb == fleet.Deny:
		return "⛔ denied by " + by
	}
	return "💬 answered by " + by + ": " + clip(strings.Join(strings.Fields(c.Text), " "), 200)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
