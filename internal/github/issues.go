package github

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v75/github"
)

// Issue is the part of a GitHub issue ralph uses.
type Issue struct {
	Repo      Repo // from repository_url; the queried repository otherwise
	Number    int
	Title     string
	Body      string
	State     string // "open" or "closed"
	URL       string // the web page (html_url)
	Labels    []string
	Milestone string // its title, "" when none
	Assignees []string
	Author    string
	Comments  int // how many comments there are
	CreatedAt time.Time
	UpdatedAt time.Time
	// IsPullRequest is set for pull requests, which the issues endpoints
	// also return; ralph's lists leave them out.
	IsPullRequest bool
}

// Ref is "owner/repo#N".
func (i Issue) Ref() string { return IssueRef{Repo: i.Repo, Number: i.Number}.String() }

// Comment is one issue comment.
type Comment struct {
	Author    string
	Body      string
	CreatedAt time.Time
	URL       string
}

// fromAPI converts go-github's issue; repo is the queried repository,
// replaced by the one in repository_url when there is one.
func fromAPI(a *gh.Issue, repo Repo) Issue {
	is := Issue{
		Repo: repo, Number: a.GetNumber(), Title: a.GetTitle(), Body: a.GetBody(), State: a.GetState(), URL: a.GetHTMLURL(),
		Comments: a.GetComments(), CreatedAt: a.GetCreatedAt().Time, UpdatedAt: a.GetUpdatedAt().Time,
		IsPullRequest: a.IsPullRequest(),
	}
	if r, ok := repoFromAPIURL(a.GetRepositoryURL()); ok {
		r.Host = repo.Host
		is.Repo = r
	}
	for _, l := range a.Labels {
		if l.GetName() != "" {
			is.Labels = append(is.Labels, l.GetName())
		}
	}
	if a.Milestone != nil {
		is.Milestone = a.Milestone.GetTitle()
	}
	for _, u := range a.Assignees {
		is.Assignees = append(is.Assignees, u.GetLogin())
	}
	if a.User != nil {
		is.Author = a.User.GetLogin()
	}
	return is
}

// repoFromAPIURL reads owner/name from ".../repos/owner/name".
func repoFromAPIURL(s string) (Repo, bool) {
	i := strings.LastIndex(s, "/repos/")
	if i < 0 {
		return Repo{}, false
	}
	owner, name, ok := strings.Cut(s[i+len("/repos/"):], "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return Repo{}, false
	}
	return Repo{Owner: owner, Name: name}, true
}

// Issue fetches one issue. A 404 becomes "issue owner/repo#N not found";
// a pull request is refused, since ralph imports issues.
func (c *Client) Issue(ctx context.Context, repo Repo, number int) (Issue, error) {
	a, _, err := c.api.Issues.Get(ctx, repo.Owner, repo.Name, number)
	err = c.apiError(err)
	if errors.Is(err, ErrNotFound) {
		return Issue{}, &NotFoundError{What: "issue " + IssueRef{Repo: repo, Number: number}.String()}
	}
	if err != nil {
		return Issue{}, err
	}
	is := fromAPI(a, repo)
	if is.IsPullRequest {
		return Issue{}, fmt.Errorf("%s is a pull request, not an issue", is.Ref())
	}
	return is, nil
}

// Filter selects issues of one repository.
type Filter struct {
	// Labels must all be on the issue.
	Labels []string
	// Milestone is a milestone title or number, "*" (any) or "none".
	Milestone string
	// Assignee is a login, "*" (anyone) or "none".
	Assignee string
	// State is "open" (default), "closed" or "all".
	State string
	// Limit caps the result (DefaultLimit when 0).
	Limit int
}

// ListIssues lists a repository's issues, newest first, pull requests left
// out, following pages until Limit.
func (c *Client) ListIssues(ctx context.Context, repo Repo, f Filter) ([]Issue, error) {
	opt := &gh.IssueListByRepoOptions{State: f.State, Labels: f.Labels, Assignee: strings.TrimPrefix(f.Assignee, "@"),
		ListOptions: gh.ListOptions{PerPage: perPage(f.Limit)}}
	if opt.State == "" {
		opt.State = "open"
	}
	if f.Milestone != "" {
		m, err := c.milestone(ctx, repo, f.Milestone)
		if err != nil {
			return nil, err
		}
		opt.Milestone = m
	}
	issues, err := paginate(c, f.Limit, func(n int) ([]Issue, *gh.Response, error) {
		opt.ListOptions.Page = n
		page, resp, err := c.api.Issues.ListByRepo(ctx, repo.Owner, repo.Name, opt)
		return convert(page, repo), resp, err
	}, notPR)
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{What: "repository " + repo.String()}
	}
	return issues, err
}

// milestone turns a title into the number the issues endpoint wants;
// numbers, "*" and "none" pass through.
func (c *Client) milestone(ctx context.Context, repo Repo, m string) (string, error) {
	if m == "*" || strings.EqualFold(m, "none") {
		return strings.ToLower(m), nil
	}
	if _, ok := issueNumber(m); ok {
		return m, nil
	}
	opt := &gh.MilestoneListOptions{State: "all", ListOptions: gh.ListOptions{PerPage: 100}}
	all, err := paginate(c, 1000, func(n int) ([]*gh.Milestone, *gh.Response, error) {
		opt.ListOptions.Page = n
		return c.api.Issues.ListMilestones(ctx, repo.Owner, repo.Name, opt)
	}, nil)
	if errors.Is(err, ErrNotFound) {
		return "", &NotFoundError{What: "repository " + repo.String()}
	}
	if err != nil {
		return "", err
	}
	for _, ms := range all {
		if strings.EqualFold(strings.TrimSpace(ms.GetTitle()), strings.TrimSpace(m)) {
			return strconv.Itoa(ms.GetNumber()), nil
		}
	}
	return "", &NotFoundError{What: fmt.Sprintf("milestone %q in %s", m, repo)}
}

// SearchIssues runs a search (GET /search/issues) and returns up to limit
// hits, best match first. Use SearchQuery to scope a user's words to a
// repository.
func (c *Client) SearchIssues(ctx context.Context, query string, limit int) ([]Issue, error) {
	opt := &gh.SearchOptions{ListOptions: gh.ListOptions{PerPage: perPage(limit)}}
	return paginate(c, limit, func(n int) ([]Issue, *gh.Response, error) {
		opt.ListOptions.Page = n
		res, resp, err := c.api.Search.Issues(ctx, query, opt)
		if err != nil {
			return nil, resp, err
		}
		return convert(res.Issues, Repo{Host: c.webHost()}), resp, nil
	}, notPR)
}

// SearchQuery adds the qualifiers a user usually leaves out: the repository
// (unless the words name a repo:, org: or user:), is:issue (unless they say
// is:issue, is:pr or type:), and the state (unless "all" or they name one).
func SearchQuery(words string, repo Repo, state string) string {
	has := func(prefixes ...string) bool {
		for _, f := range strings.Fields(strings.ToLower(words)) {
			for _, p := range prefixes {
				if strings.HasPrefix(strings.TrimPrefix(f, "-"), p) {
					return true
				}
			}
		}
		return false
	}
	q := strings.TrimSpace(words)
	if !repo.IsZero() && !has("repo:", "org:", "user:") {
		q += " repo:" + repo.String()
	}
	if !has("is:issue", "is:pr", "type:") {
		q += " is:issue"
	}
	if state == "" {
		state = "open"
	}
	if state != "all" && !has("state:", "is:open", "is:closed") {
		q += " state:" + state
	}
	return strings.TrimSpace(q)
}

// Comments returns up to limit comments of an issue, oldest first.
func (c *Client) Comments(ctx context.Context, repo Repo, number, limit int) ([]Comment, error) {
	opt := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: perPage(limit)}}
	out, err := paginate(c, limit, func(n int) ([]Comment, *gh.Response, error) {
		opt.ListOptions.Page = n
		page, resp, err := c.api.Issues.ListComments(ctx, repo.Owner, repo.Name, number, opt)
		cs := make([]Comment, 0, len(page))
		for _, a := range page {
			cs = append(cs, Comment{Author: a.GetUser().GetLogin(), Body: a.GetBody(), CreatedAt: a.GetCreatedAt().Time, URL: a.GetHTMLURL()})
		}
		return cs, resp, err
	}, nil)
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{What: "issue " + IssueRef{Repo: repo, Number: number}.String()}
	}
	return out, err
}

// webHost is the web host that belongs to the API root.
func (c *Client) webHost() string {
	if c.base.Host == "api.github.com" {
		return DefaultHost
	}
	return c.base.Host
}

func convert(page []*gh.Issue, repo Repo) []Issue {
	out := make([]Issue, 0, len(page))
	for _, a := range page {
		out = append(out, fromAPI(a, repo))
	}
	return out
}

func notPR(i Issue) bool { return !i.IsPullRequest }
