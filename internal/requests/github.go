package requests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v75/github"

	"ralph/internal/github"
)

// hub is the GitHub REST API as requests use it, through go-github with
// retries: a rate limit waits for its reset (X-RateLimit-Reset, or
// Retry-After for a secondary limit), a server error or a broken
// connection backs off and tries again.
type hub struct {
	c     *gh.Client
	sleep func(context.Context, time.Duration) error
	tries int

	mu    sync.Mutex
	self  string
	perms map[string]permEntry // "owner/name/user"
	now   func() time.Time
}

type permEntry struct {
	write bool
	at    time.Time
}

// newHub is a client of the API at base ("" for api.github.com), made by
// the one constructor ralph's GitHub clients share.
func newHub(base, token string, httpc *http.Client) (*hub, error) {
	c, err := github.NewAPI(github.Options{BaseURL: base, Token: token, HTTPClient: httpc})
	if err != nil {
		return nil, fmt.Errorf("GITHUB_API_URL: %w", err)
	}
	return &hub{c: c, sleep: sleepCtx, tries: 5, perms: map[string]permEntry{}, now: time.Now}, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// maxWait bounds one rate-limit wait: a reset an hour away is waited for
// in steps, so that a stopping daemon is not held.
const maxWait = 10 * time.Minute

// retry runs call until it succeeds, fails for good, or tries run out.
func (h *hub) retry(ctx context.Context, call func() (*gh.Response, error)) error {
	backoff := time.Second
	var err error
	for try := 0; try < h.tries; try++ {
		var resp *gh.Response
		resp, err = call()
		if err == nil {
			return nil
		}
		var wait time.Duration
		var rl *gh.RateLimitError
		var ab *gh.AbuseRateLimitError
		var ne net.Error
		switch {
		case errors.As(err, &rl):
			wait = time.Until(rl.Rate.Reset.Time) + time.Second
		case errors.As(err, &ab):
			wait = ab.GetRetryAfter()
			if wait <= 0 {
				wait = time.Minute
			}
		case resp != nil && resp.StatusCode >= 500:
			wait, backoff = backoff, backoff*2
		case resp == nil && (errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)):
			wait, backoff = backoff, backoff*2
		default:
			return err
		}
		if err := h.sleep(ctx, min(max(wait, 0), maxWait)); err != nil {
			return err
		}
	}
	return err
}

// Self is the login the token belongs to: its comments are never
// requests.
func (h *hub) Self(ctx context.Context) (string, error) {
	h.mu.Lock()
	self := h.self
	h.mu.Unlock()
	if self != "" {
		return self, nil
	}
	var u *gh.User
	err := h.retry(ctx, func() (r *gh.Response, err error) { u, r, err = h.c.Users.Get(ctx, ""); return })
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	h.self = u.GetLogin()
	h.mu.Unlock()
	return u.GetLogin(), nil
}

// permTTL is how long a collaborator's permission is believed.
const permTTL = 5 * time.Minute

// CanWrite says whether user has write access to repo (admin, maintain,
// write): only they make or steer requests.
func (h *hub) CanWrite(ctx context.Context, repo, user string) (bool, error) {
	key := repo + "/" + user
	h.mu.Lock()
	e, ok := h.perms[key]
	h.mu.Unlock()
	if ok && h.now().Sub(e.at) < permTTL {
		return e.write, nil
	}
	owner, name, _ := strings.Cut(repo, "/")
	var p *gh.RepositoryPermissionLevel
	err := h.retry(ctx, func() (r *gh.Response, err error) {
		p, r, err = h.c.Repositories.GetPermissionLevel(ctx, owner, name, user)
		return
	})
	var ge *gh.ErrorResponse
	if errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusNotFound {
		p, err = &gh.RepositoryPermissionLevel{}, nil // not a collaborator
	}
	if err != nil {
		return false, err
	}
	write := false
	for _, v := range []string{p.GetPermission(), p.GetRoleName()} {
		switch v {
		case "admin", "maintain", "write":
			write = true
		}
	}
	h.mu.Lock()
	h.perms[key] = permEntry{write: write, at: h.now()}
	h.mu.Unlock()
	return write, nil
}

// Repo returns a repository's clone URL and default branch.
func (h *hub) Repo(ctx context.Context, repo string) (cloneURL, base string, err error) {
	owner, name, _ := strings.Cut(repo, "/")
	var r *gh.Repository
	err = h.retry(ctx, func() (resp *gh.Response, err error) { r, resp, err = h.c.Repositories.Get(ctx, owner, name); return })
	if err != nil {
		return "", "", err
	}
	base = r.GetDefaultBranch()
	if base == "" {
		base = "main"
	}
	return r.GetCloneURL(), base, nil
}

// LabelledIssues lists the open issues (not pull requests) with label.
func (h *hub) LabelledIssues(ctx context.Context, repo, label string) ([]*gh.Issue, error) {
	owner, name, _ := strings.Cut(repo, "/")
	opt := &gh.IssueListByRepoOptions{State: "open", Labels: []string{label}, ListOptions: gh.ListOptions{PerPage: 100}}
	var out []*gh.Issue
	for {
		var page []*gh.Issue
		var resp *gh.Response
		err := h.retry(ctx, func() (r *gh.Response, err error) {
			page, r, err = h.c.Issues.ListByRepo(ctx, owner, name, opt)
			resp = r
			return
		})
		if err != nil {
			return nil, err
		}
		for _, is := range page {
			if !is.IsPullRequest() {
				out = append(out, is)
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opt.ListOptions.Page = resp.NextPage
	}
}

// Comments lists an issue's comments, oldest first.
func (h *hub) Comments(ctx context.Context, repo string, number int) ([]*gh.IssueComment, error) {
	owner, name, _ := strings.Cut(repo, "/")
	return pages(ctx, h, func(o gh.ListOptions) ([]*gh.IssueComment, *gh.Response, error) {
		return h.c.Issues.ListComments(ctx, owner, name, number, &gh.IssueListCommentsOptions{ListOptions: o})
	})
}

// Comment posts body on an issue, unless a comment carrying marker is
// there already (posted before a crash): the id either way.
func (h *hub) Comment(ctx context.Context, repo string, number int, marker, body string) (int64, error) {
	if marker != "" {
		cs, err := h.Comments(ctx, repo, number)
		if err != nil {
			return 0, err
		}
		for _, c := range cs {
			if strings.Contains(c.GetBody(), marker) {
				return c.GetID(), nil
			}
		}
		body += "\n\n" + marker
	}
	owner, name, _ := strings.Cut(repo, "/")
	var c *gh.IssueComment
	err := h.retry(ctx, func() (r *gh.Response, err error) {
		c, r, err = h.c.Issues.CreateComment(ctx, owner, name, number, &gh.IssueComment{Body: gh.Ptr(body)})
		return
	})
	return c.GetID(), err
}

// EditComment replaces a comment's body.
func (h *hub) EditComment(ctx context.Context, repo string, id int64, body string) error {
	owner, name, _ := strings.Cut(repo, "/")
	return h.retry(ctx, func() (r *gh.Response, err error) {
		_, r, err = h.c.Issues.EditComment(ctx, owner, name, id, &gh.IssueComment{Body: gh.Ptr(body)})
		return
	})
}

// OpenPull is the open pull request from branch, nil when there is none.
func (h *hub) OpenPull(ctx context.Context, repo, branch string) (*gh.PullRequest, error) {
	owner, name, _ := strings.Cut(repo, "/")
	var open []*gh.PullRequest
	err := h.retry(ctx, func() (r *gh.Response, err error) {
		open, r, err = h.c.PullRequests.List(ctx, owner, name, &gh.PullRequestListOptions{State: "open", Head: owner + ":" + branch})
		return
	})
	if err != nil {
		return nil, err
	}
	for _, pr := range open {
		if pr.GetHead().GetRef() == branch {
			return pr, nil
		}
	}
	return nil, nil
}

// PullRequest opens a pull request from branch (a draft when draft), or
// finds the open one (never a second, and left as it is); it returns its
// number and address.
func (h *hub) PullRequest(ctx context.Context, repo, branch, base, title, body string, draft bool) (int, string, error) {
	owner, name, _ := strings.Cut(repo, "/")
	pr, err := h.OpenPull(ctx, repo, branch)
	if err != nil {
		return 0, "", err
	}
	if pr != nil {
		return pr.GetNumber(), pr.GetHTMLURL(), nil
	}
	err = h.retry(ctx, func() (r *gh.Response, err error) {
		pr, r, err = h.c.PullRequests.Create(ctx, owner, name, &gh.NewPullRequest{Title: gh.Ptr(title), Head: gh.Ptr(branch), Base: gh.Ptr(base), Body: gh.Ptr(body), Draft: gh.Ptr(draft)})
		return
	})
	if err != nil {
		return 0, "", err
	}
	return pr.GetNumber(), pr.GetHTMLURL(), nil
}

// MarkReady marks a draft pull request ready for review. REST cannot:
// it is GraphQL's markPullRequestReadyForReview.
func (h *hub) MarkReady(ctx context.Context, nodeID string) error {
	return h.graphql(ctx, "mark pull request ready",
		`mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft } } }`,
		map[string]any{"id": nodeID}, nil)
}

// graphql sends one GraphQL document through the same client as REST (its
// token, its retries) to the GraphQL endpoint beside the REST root, and
// decodes its data into data (nil: not read); an answer with errors is an
// error that names what was asked.
func (h *hub) graphql(ctx context.Context, what, query string, vars map[string]any, data any) error {
	body := map[string]any{"query": query, "variables": vars}
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	err := h.retry(ctx, func() (*gh.Response, error) {
		req, err := h.c.NewRequest("POST", graphqlURL(h.c.BaseURL.String()), body)
		if err != nil {
			return nil, err
		}
		return h.c.Do(ctx, req, &out)
	})
	if err != nil {
		return err
	}
	if len(out.Errors) > 0 {
		return fmt.Errorf("%s: %s", what, out.Errors[0].Message)
	}
	if data != nil && len(out.Data) > 0 {
		if err := json.Unmarshal(out.Data, data); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// graphqlURL is the GraphQL endpoint of a REST root: api.github.com/graphql,
// or HOST/api/graphql for an Enterprise server's HOST/api/v3/.
func graphqlURL(rest string) string {
	if root, ok := strings.CutSuffix(rest, "/api/v3/"); ok {
		return root + "/api/graphql"
	}
	return strings.TrimSuffix(rest, "/") + "/graphql"
}
