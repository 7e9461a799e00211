package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
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

// apiIssue is the wire form of an issue.
type apiIssue struct {
	Number        int             `json:"number"`
	Title         string          `json:"title"`
	Body          *string         `json:"body"`
	State         string          `json:"state"`
	HTMLURL       string          `json:"html_url"`
	RepositoryURL string          `json:"repository_url"`
	Labels        []apiLabel      `json:"labels"`
	Milestone     *apiMilestone   `json:"milestone"`
	Assignees     []apiUser       `json:"assignees"`
	User          *apiUser        `json:"user"`
	Comments      int             `json:"comments"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
	PullRequest   json.RawMessage `json:"pull_request"`
}

// apiLabel reads both label forms GitHub uses: an object with a name, and a
// bare string.
type apiLabel struct{ Name string }

func (l *apiLabel) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &l.Name)
	}
	var o struct {
		Name string `json:"name"`
	}
	err := json.Unmarshal(b, &o)
	l.Name = o.Name
	return err
}

type apiMilestone struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
}

type apiUser struct {
	Login string `json:"login"`
}

type apiComment struct {
	Body      string    `json:"body"`
	User      *apiUser  `json:"user"`
	CreatedAt time.Time `json:"created_at"`
	HTMLURL   string    `json:"html_url"`
}

func (a apiIssue) issue(repo Repo) Issue {
	is := Issue{
		Repo: repo, Number: a.Number, Title: a.Title, State: a.State, URL: a.HTMLURL,
		Comments: a.Comments, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		IsPullRequest: len(a.PullRequest) > 0 && string(a.PullRequest) != "null",
	}
	if a.Body != nil {
		is.Body = *a.Body
	}
	if r, ok := repoFromAPIURL(a.RepositoryURL); ok {
		r.Host = repo.Host
		is.Repo = r
	}
	for _, l := range a.Labels {
		if l.Name != "" {
			is.Labels = append(is.Labels, l.Name)
		}
	}
	if a.Milestone != nil {
		is.Milestone = a.Milestone.Title
	}
	for _, u := range a.Assignees {
		is.Assignees = append(is.Assignees, u.Login)
	}
	if a.User != nil {
		is.Author = a.User.Login
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

func repoPath(repo Repo) string {
	return "/repos/" + url.PathEscape(repo.Owner) + "/" + url.PathEscape(repo.Name)
}

// Issue fetches one issue. A 404 becomes "issue owner/repo#N not found";
// a pull request is refused, since ralph imports issues.
func (c *Client) Issue(ctx context.Context, repo Repo, number int) (Issue, error) {
	var a apiIssue
	_, err := c.get(ctx, c.endpoint(repoPath(repo)+"/issues/"+strconv.Itoa(number), nil), &a)
	if errors.Is(err, ErrNotFound) {
		return Issue{}, &NotFoundError{What: "issue " + IssueRef{Repo: repo, Number: number}.String()}
	}
	if err != nil {
		return Issue{}, err
	}
	is := a.issue(repo)
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
	q := url.Values{"per_page": {perPage(f.Limit)}}
	q.Set("state", f.State)
	if f.State == "" {
		q.Set("state", "open")
	}
	if len(f.Labels) > 0 {
		q.Set("labels", strings.Join(f.Labels, ","))
	}
	if a := strings.TrimPrefix(f.Assignee, "@"); a != "" {
		q.Set("assignee", a)
	}
	if f.Milestone != "" {
		m, err := c.milestone(ctx, repo, f.Milestone)
		if err != nil {
			return nil, err
		}
		q.Set("milestone", m)
	}
	issues, err := paginate(c.endpoint(repoPath(repo)+"/issues", q), f.Limit, func(u string) ([]Issue, string, error) {
		var page []apiIssue
		next, err := c.get(ctx, u, &page)
		return convert(page, repo), next, err
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
	q := url.Values{"state": {"all"}, "per_page": {"100"}}
	all, err := paginate(c.endpoint(repoPath(repo)+"/milestones", q), 1000, func(u string) ([]apiMilestone, string, error) {
		var page []apiMilestone
		next, err := c.get(ctx, u, &page)
		return page, next, err
	}, nil)
	if errors.Is(err, ErrNotFound) {
		return "", &NotFoundError{What: "repository " + repo.String()}
	}
	if err != nil {
		return "", err
	}
	for _, ms := range all {
		if strings.EqualFold(strings.TrimSpace(ms.Title), strings.TrimSpace(m)) {
			return strconv.Itoa(ms.Number), nil
		}
	}
	return "", &NotFoundError{What: fmt.Sprintf("milestone %q in %s", m, repo)}
}

// SearchIssues runs a search (GET /search/issues) and returns up to limit
// hits, best match first. Use SearchQuery to scope a user's words to a
// repository.
func (c *Client) SearchIssues(ctx context.Context, query string, limit int) ([]Issue, error) {
	q := url.Values{"q": {query}, "per_page": {perPage(limit)}}
	return paginate(c.endpoint("/search/issues", q), limit, func(u string) ([]Issue, string, error) {
		var page struct {
			Items []apiIssue `json:"items"`
		}
		next, err := c.get(ctx, u, &page)
		return convert(page.Items, Repo{Host: c.webHost()}), next, err
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
	q := url.Values{"per_page": {perPage(limit)}}
	out, err := paginate(c.endpoint(repoPath(repo)+"/issues/"+strconv.Itoa(number)+"/comments", q), limit, func(u string) ([]Comment, string, error) {
		var page []apiComment
		next, err := c.get(ctx, u, &page)
		cs := make([]Comment, 0, len(page))
		for _, a := range page {
			cm := Comment{Body: a.Body, CreatedAt: a.CreatedAt, URL: a.HTMLURL}
			if a.User != nil {
				cm.Author = a.User.Login
			}
			cs = append(cs, cm)
		}
		return cs, next, err
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

func convert(page []apiIssue, repo Repo) []Issue {
	out := make([]Issue, 0, len(page))
	for _, a := range page {
		out = append(out, a.issue(repo))
	}
	return out
}

func notPR(i Issue) bool { return !i.IsPullRequest }
