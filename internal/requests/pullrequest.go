package requests

import (
	"context"
	"fmt"

	"ralph/internal/serve"
)

// Where a request's work goes: its branch pushed and its pull request
// opened, marked ready, or kept as a draft when the loop stopped short.

// complete pushes the branch, opens (or finds) the pull request and posts
// its address.
func (s *Service) complete(ctx context.Context, r *Request, v serve.TaskView, dec Decision, dir string, at repoAt, marker string) error {
	msg := fmt.Sprintf("ralph: %s", r.Title)
	if r.Number > 0 {
		msg += fmt.Sprintf(" (#%d)", r.Number)
	}
	ahead, err := s.ws.publish(ctx, dir, at.cloneURL, at.base, r.Branch, msg)
	if err != nil {
		return err
	}
	if ahead == 0 {
		_, err := s.conv(*r).Post(ctx, *r, marker, "✅ Finished, but nothing in the repository changed, so there is no pull request."+summaryLine(dec.Summary))
		return err
	}
	return s.openPR(ctx, r, v, dec, at.base, marker)
}

// openPR opens the pull request of a pushed branch (or finds the open
// one), records it and posts its address. It is a draft while ralph's own
// check of the claim failed (or, where no check is set, while the agent
// says the tests fail); a draft whose check now passes is marked ready for
// review.
func (s *Service) openPR(ctx context.Context, r *Request, v serve.TaskView, dec Decision, base, marker string) error {
	c := lastCheck(v)
	draft := c.failed() || (c.run == nil && dec.TestsFailing)
	_, url, err := s.pullRequest(ctx, r, base, prBody(*r, s.thread(ctx, *r), v, dec, c, ""), draft, c.verified)
	if err != nil {
		return err
	}
	link := "🚀 Pull request: " + url
	switch {
	case c.verified:
		link = "🚀 Pull request, verified (`" + c.run.Command + "` passed): " + url
	case c.failed():
		link = "🚧 Draft pull request (ralph's check `" + c.run.Command + "` " + c.run.Outcome() + "): " + url
	case draft:
		link = "🚧 Draft pull request (the agent reported the tests failing; mark it ready for review once they pass): " + url
	}
	_, err = s.conv(*r).Post(ctx, *r, marker, link+summaryLine(dec.Summary))
	return err
}

// pullRequest opens the branch's pull request (a draft when draft) or
// finds the open one, marks a found draft ready for review when ready (the
// check passed), and records it.
func (s *Service) pullRequest(ctx context.Context, r *Request, base, body string, draft, ready bool) (int, string, error) {
	pr, err := s.hub.OpenPull(ctx, r.Repo, r.Branch)
	if err != nil {
		return 0, "", err
	}
	var n int
	var url string
	isDraft := draft // what the pull request is once this is done
	switch {
	case pr == nil:
		if n, url, err = s.hub.PullRequest(ctx, r.Repo, r.Branch, base, r.Title, body, draft); err != nil {
			return 0, "", err
		}
	default:
		n, url = pr.GetNumber(), pr.GetHTMLURL()
		isDraft = pr.GetDraft() && !ready
		if pr.GetDraft() && ready {
			if err := s.hub.MarkReady(ctx, pr.GetNodeID()); err != nil {
				return 0, "", err
			}
			s.logf("%s: pull request #%d marked ready for review", r.Key, n)
		}
	}
	r.PRNumber, r.PRURL = n, url
	if err := s.store.Update(*r); err != nil {
		return 0, "", err
	}
	if err := s.d.SetPRURL(r.Session, url, isDraft); err != nil {
		return 0, "", err
	}
	return n, url, nil
}

// halt says why a request's loop stopped short and keeps its work: what
// the agent left on the branch is committed, pushed and put in a draft
// pull request that says why it stopped, so no cap throws work away.
func (s *Service) halt(ctx context.Context, r *Request, v serve.TaskView, dec Decision, dir string, at repoAt, marker string) error {
	text := haltText(dec, v)
	msg := fmt.Sprintf("ralph: %s (work in progress, stopped: %s)", r.Title, dec.Reason)
	ahead, err := s.ws.publish(ctx, dir, at.cloneURL, at.base, r.Branch, msg)
	if err != nil {
		// The report matters more than the push; the next pass pushes.
		s.logf("%s: keep the work of a halted loop: %v", r.Key, err)
	} else if ahead > 0 {
		_, url, err := s.pullRequest(ctx, r, at.base, prBody(*r, s.thread(ctx, *r), v, dec, lastCheck(v), dec.Reason), true, false)
		if err != nil {
			return err
		}
		text += "\n\nThe work so far is kept in a draft pull request: " + url
	}
	_, err = s.conv(*r).Post(ctx, *r, marker, text)
	return err
}

// thread is the permalink of a Slack request's thread, for its pull
// request to link back to ("" for a GitHub request, or when Slack cannot
// say: the body then names the channel and thread).
func (s *Service) thread(ctx context.Context, r Request) string {
	if r.Source != "slack" || s.slack == nil {
		return ""
	}
	link, err := s.slack.Permalink(ctx, r.Channel, r.Thread)
	if err != nil {
		s.logf("%s: %v", r.Key, err)
	}
	return link
}
