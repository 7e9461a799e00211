package requests

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	gh "github.com/google/go-github/v75/github"

	"ralph/internal/httpcap"
)

// GitHubWebhookPath is where GitHub delivers issue events.
const GitHubWebhookPath = "/webhooks/github"

// Routes are the webhook handlers, served outside the API token: their
// signatures authenticate them.
func (s *Service) Routes() map[string]http.Handler {
	m := map[string]http.Handler{}
	if s.cfg.On() && s.cfg.WebhookSecret != "" {
		m[GitHubWebhookPath] = httpcap.Body(httpcap.GitHubBody, http.HandlerFunc(s.githubWebhook))
	}
	if s.slack != nil && s.cfg.Slack.SigningSecret != "" {
		m[SlackWebhookPath] = httpcap.Body(httpcap.WebhookBody, http.HandlerFunc(s.slackWebhook))
		m[SlackInteractivePath] = httpcap.Body(httpcap.WebhookBody, http.HandlerFunc(s.slackInteractive))
	}
	return m
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// githubRequest is the request an issue becomes (not yet stored).
func githubRequest(repo string, is *gh.Issue, now time.Time) Request {
	n := is.GetNumber()
	session := fmt.Sprintf("gh-%s-%d", unsafeName.ReplaceAllString(strings.ReplaceAll(repo, "/", "-"), "-"), n)
	if len(session) > 64 {
		session = fmt.Sprintf("gh-%s-%d", session[3:50], n)
	}
	return Request{Key: fmt.Sprintf("github:%s#%d", repo, n), Source: "github", Repo: repo, Number: n,
		Title: is.GetTitle(), Body: is.GetBody(), Author: is.GetUser().GetLogin(), Session: session,
		Branch: fmt.Sprintf("ralph/github-%d", n), CreatedAt: now}
}

func (s *Service) configured(repo string) bool {
	return slices.ContainsFunc(s.cfg.Repos, func(r string) bool { return strings.EqualFold(r, repo) })
}

func hasLabel(is *gh.Issue, label string) bool {
	return slices.ContainsFunc(is.Labels, func(l *gh.Label) bool { return strings.EqualFold(l.GetName(), label) })
}

// ours says whether a comment is ralph's own: its marker, or its login.
func (s *Service) ours(ctx context.Context, author, body string) bool {
	if strings.Contains(body, "<!-- ralph:") {
		return true
	}
	self, err := s.hub.Self(ctx)
	return err == nil && strings.EqualFold(self, author)
}

// intakeIssue records a labelled issue as a request, once, with the
// comments it already had as context; only an issue opened by someone who
// may write to the repository becomes one.
func (s *Service) intakeIssue(ctx context.Context, repo string, is *gh.Issue) error {
	if is.IsPullRequest() || !hasLabel(is, s.cfg.Label) || !strings.EqualFold(is.GetState(), "open") {
		return nil
	}
	key := fmt.Sprintf("github:%s#%d", repo, is.GetNumber())
	if _, err := s.store.Get(key); err == nil {
		return nil
	}
	ok, err := s.hub.CanWrite(ctx, repo, is.GetUser().GetLogin())
	if err != nil || !ok {
		if err == nil && s.once("ignored:"+key) {
			s.logf("%s: ignored: %s cannot write to %s", key, is.GetUser().GetLogin(), repo)
		}
		return err
	}
	r := githubRequest(repo, is, s.opts.Now())
	earlier := s.earlierComments(ctx, key, repo, r.Number)
	created, err := s.store.Create(r, Entry{ID: "opening", Author: r.Author, Body: r.Title + "\n\n" + r.Body, At: is.GetCreatedAt().Time})
	if err != nil || !created {
		return err
	}
	s.logf("%s: new request %q (session %s, branch %s)", key, r.Title, r.Session, r.Branch)
	for _, e := range earlier {
		_, _ = s.store.AddEntry(key, e)
	}
	s.poke(key)
	return nil
}

// earlierComments are the comments an issue had before it became a
// request, as context, not triggers: those of people who may write to the
// repository, as for the comments that come later. A stranger's comment
// never reaches the agent, whenever it was written. What cannot be read
// now is left to the poll, which takes a writer's comment as a new one.
func (s *Service) earlierComments(ctx context.Context, key, repo string, number int) []Entry {
	cs, err := s.hub.Comments(ctx, repo, number)
	if err != nil {
		s.logf("%s: earlier comments: %v", key, err)
		return nil
	}
	var out []Entry
	for _, c := range cs {
		author := c.GetUser().GetLogin()
		if s.ours(ctx, author, c.GetBody()) {
			continue
		}
		if ok, err := s.hub.CanWrite(ctx, repo, author); err != nil || !ok {
			continue
		}
		out = append(out, Entry{ID: fmt.Sprint(c.GetID()), Author: author, Body: c.GetBody(), At: c.GetCreatedAt().Time, Acted: true})
	}
	return out
}

// intakeComment records a comment on a request's issue from someone who
// may write; a comment on a labelled issue that is not a request yet makes
// it one first.
func (s *Service) intakeComment(ctx context.Context, repo string, is *gh.Issue, c *gh.IssueComment) error {
	author := c.GetUser().GetLogin()
	if s.ours(ctx, author, c.GetBody()) {
		return nil
	}
	key := fmt.Sprintf("github:%s#%d", repo, is.GetNumber())
	if _, err := s.store.Get(key); err != nil {
		if is.GetTitle() == "" {
			return nil // a bare issue from the poll: it was never a request
		}
		return s.intakeIssue(ctx, repo, is) // the comment is among those it reads
	}
	ok, err := s.hub.CanWrite(ctx, repo, author)
	if err != nil || !ok {
		return err
	}
	added, err := s.store.AddEntry(key, Entry{ID: fmt.Sprint(c.GetID()), Author: author, Body: c.GetBody(), At: c.GetCreatedAt().Time})
	if err != nil {
		return err
	}
	if added {
		s.logf("%s: comment %d from %s", key, c.GetID(), author)
		s.poke(key)
	}
	return nil
}

// pollLoop looks for labelled issues and new comments every cfg.Poll: no
// public address is needed, and what a webhook missed is found.
func (s *Service) pollLoop(ctx context.Context) {
	for {
		if err := s.pollOnce(ctx); err != nil && ctx.Err() == nil {
			s.logf("poll: %v", err)
		}
		if sleepCtx(ctx, s.cfg.Poll) != nil {
			return
		}
	}
}

func (s *Service) pollOnce(ctx context.Context) error {
	for _, repo := range s.cfg.Repos {
		issues, err := s.hub.LabelledIssues(ctx, repo, s.cfg.Label)
		if err != nil {
			return err
		}
		for _, is := range issues {
			if err := s.intakeIssue(ctx, repo, is); err != nil {
				return err
			}
		}
	}
	all, err := s.store.All()
	if err != nil {
		return err
	}
	for _, r := range all {
		if err := s.followPR(ctx, r); err != nil && ctx.Err() == nil {
			// One pull request that cannot be read holds up no other.
			s.logf("%s: pull request #%d: %v", r.Key, r.PRNumber, err)
		}
		if r.Source != "github" || !s.configured(r.Repo) {
			continue
		}
		cs, err := s.hub.Comments(ctx, r.Repo, r.Number)
		if err != nil {
			return err
		}
		is := &gh.Issue{Number: gh.Ptr(r.Number)}
		for _, c := range cs {
			if err := s.intakeComment(ctx, r.Repo, is, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// githubWebhook takes issue and comment events: the signature first (a
// forged or unsigned delivery is a 401 and changes nothing), then the
// delivery id (a redelivery is acknowledged and ignored). An unsigned
// delivery is refused before its body is read, and a signed one is read
// only up to its cap (Routes): the body must be whole before its
// signature can be checked.
func (s *Service) githubWebhook(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(gh.SHA256SignatureHeader) == "" && r.Header.Get(gh.SHA1SignatureHeader) == "" {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	payload, err := gh.ValidatePayload(r, []byte(s.cfg.WebhookSecret))
	if httpcap.TooLarge(err) {
		httpcap.RefuseTooLarge(w, httpcap.GitHubBody)
		return
	}
	if err != nil {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	id := "github:" + gh.DeliveryID(r)
	if gh.DeliveryID(r) == "" || s.store.Seen(id) {
		w.WriteHeader(http.StatusOK)
		fmt.Fprintln(w, "duplicate delivery ignored")
		return
	}
	ev, err := gh.ParseWebHook(gh.WebHookType(r), payload)
	if err != nil {
		// Event types ralph does not read are fine: acknowledged.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ctx := r.Context()
	switch e := ev.(type) {
	case *gh.IssuesEvent:
		repo := e.GetRepo().GetFullName()
		switch e.GetAction() {
		case "opened", "labeled", "reopened", "edited":
			if s.configured(repo) {
				err = s.intakeIssue(ctx, repo, e.GetIssue())
			}
		}
	case *gh.IssueCommentEvent:
		repo := e.GetRepo().GetFullName()
		switch {
		case e.GetAction() == "created" && e.GetIssue().IsPullRequest():
			err = s.nudgePR(ctx, repo, e.GetIssue().GetNumber(), "")
		case e.GetAction() == "created" && s.configured(repo):
			err = s.intakeComment(ctx, repo, e.GetIssue(), e.GetComment())
		}
	case *gh.PullRequestReviewEvent:
		err = s.nudgePR(ctx, e.GetRepo().GetFullName(), e.GetPullRequest().GetNumber(), "")
	case *gh.PullRequestReviewCommentEvent:
		err = s.nudgePR(ctx, e.GetRepo().GetFullName(), e.GetPullRequest().GetNumber(), "")
	case *gh.PullRequestEvent:
		err = s.nudgePR(ctx, e.GetRepo().GetFullName(), e.GetPullRequest().GetNumber(), "")
	case *gh.CheckRunEvent:
		err = s.nudgePR(ctx, e.GetRepo().GetFullName(), 0, e.GetCheckRun().GetCheckSuite().GetHeadBranch())
	case *gh.CheckSuiteEvent:
		err = s.nudgePR(ctx, e.GetRepo().GetFullName(), 0, e.GetCheckSuite().GetHeadBranch())
	case *gh.StatusEvent:
		for _, b := range e.Branches {
			if err == nil {
				err = s.nudgePR(ctx, e.GetRepo().GetFullName(), 0, b.GetName())
			}
		}
	}
	if err != nil {
		// Not remembered as handled: GitHub's redelivery tries again.
		s.logf("webhook %s: %v", id, err)
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if _, err := s.store.Delivery(id, s.opts.Now()); err != nil {
		s.logf("webhook %s: %v", id, err)
	}
	w.WriteHeader(http.StatusAccepted)
}

// nudgePR follows the pull request a webhook is about — by its number, or
// by its head branch (checks and statuses) — when it is one of ralph's:
// what it says is read from GitHub, as the poll reads it, never taken
// from the payload.
func (s *Service) nudgePR(ctx context.Context, repo string, number int, branch string) error {
	all, err := s.store.All()
	if err != nil {
		return err
	}
	for _, r := range all {
		if strings.EqualFold(r.Repo, repo) && following(r) && ((number > 0 && r.PRNumber == number) || (branch != "" && r.Branch == branch)) {
			return s.followPR(ctx, r)
		}
	}
	return nil
}
