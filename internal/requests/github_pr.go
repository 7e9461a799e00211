package requests

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v75/github"
)

// What ralph reads of, and writes on, the pull requests it follows: the
// pull request itself (state, head, mergeability), its reviews and review
// comments, the checks on its head; replies in review threads and the
// threads resolved (GraphQL: REST cannot resolve a thread).

// pages reads every page of a list, 100 at a time.
func pages[T any](ctx context.Context, h *hub, list func(gh.ListOptions) ([]T, *gh.Response, error)) ([]T, error) {
	opt := gh.ListOptions{PerPage: 100}
	var out []T
	for {
		var page []T
		var resp *gh.Response
		err := h.retry(ctx, func() (r *gh.Response, err error) {
			page, r, err = list(opt)
			resp = r
			return
		})
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// Pull reads a pull request.
func (h *hub) Pull(ctx context.Context, repo string, number int) (*gh.PullRequest, error) {
	owner, name, _ := strings.Cut(repo, "/")
	var pr *gh.PullRequest
	err := h.retry(ctx, func() (r *gh.Response, err error) {
		pr, r, err = h.c.PullRequests.Get(ctx, owner, name, number)
		return
	})
	return pr, err
}

// Reviews lists a pull request's submitted reviews.
func (h *hub) Reviews(ctx context.Context, repo string, number int) ([]*gh.PullRequestReview, error) {
	owner, name, _ := strings.Cut(repo, "/")
	return pages(ctx, h, func(o gh.ListOptions) ([]*gh.PullRequestReview, *gh.Response, error) {
		return h.c.PullRequests.ListReviews(ctx, owner, name, number, &o)
	})
}

// ReviewComments lists a pull request's review comments, replies
// included, oldest first.
func (h *hub) ReviewComments(ctx context.Context, repo string, number int) ([]*gh.PullRequestComment, error) {
	owner, name, _ := strings.Cut(repo, "/")
	return pages(ctx, h, func(o gh.ListOptions) ([]*gh.PullRequestComment, *gh.Response, error) {
		return h.c.PullRequests.ListComments(ctx, owner, name, number, &gh.PullRequestListCommentsOptions{ListOptions: o})
	})
}

// Reply answers the review thread of comment id, unless a reply carrying
// marker is in it already (sent before a crash).
func (h *hub) Reply(ctx context.Context, repo string, number int, id int64, marker, body string) error {
	cs, err := h.ReviewComments(ctx, repo, number)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if strings.Contains(c.GetBody(), marker) {
			return nil
		}
	}
	owner, name, _ := strings.Cut(repo, "/")
	return h.retry(ctx, func() (*gh.Response, error) {
		req, err := h.c.NewRequest("POST", fmt.Sprintf("repos/%s/%s/pulls/%d/comments/%d/replies", owner, name, number, id),
			map[string]string{"body": body + "\n\n" + marker})
		if err != nil {
			return nil, err
		}
		return h.c.Do(ctx, req, nil)
	})
}

// failedCheck is a check run or commit status on a commit that did not
// pass.
type failedCheck struct {
	Name       string // the check run's name, the status's context
	Conclusion string // failure, timed_out, error, …
	Summary    string // its output's title and summary, the status's description
}

// FailedChecks lists the checks and statuses on sha that ended without
// passing.
func (h *hub) FailedChecks(ctx context.Context, repo, sha string) ([]failedCheck, error) {
	owner, name, _ := strings.Cut(repo, "/")
	var runs []*gh.CheckRun
	opt := &gh.ListCheckRunsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		var res *gh.ListCheckRunsResults
		var resp *gh.Response
		err := h.retry(ctx, func() (r *gh.Response, err error) {
			res, r, err = h.c.Checks.ListCheckRunsForRef(ctx, owner, name, sha, opt)
			resp = r
			return
		})
		if err != nil {
			return nil, err
		}
		runs = append(runs, res.CheckRuns...)
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	var out []failedCheck
	for _, c := range runs {
		if checkFailed(c.GetConclusion()) {
			out = append(out, failedCheck{Name: c.GetName(), Conclusion: c.GetConclusion(),
				Summary: strings.TrimSpace(c.GetOutput().GetTitle() + "\n" + c.GetOutput().GetSummary())})
		}
	}
	var st *gh.CombinedStatus
	err := h.retry(ctx, func() (r *gh.Response, err error) {
		st, r, err = h.c.Repositories.GetCombinedStatus(ctx, owner, name, sha, &gh.ListOptions{PerPage: 100})
		return
	})
	if err != nil {
		return nil, err
	}
	for _, s := range st.Statuses {
		if checkFailed(s.GetState()) {
			out = append(out, failedCheck{Name: s.GetContext(), Conclusion: s.GetState(), Summary: s.GetDescription()})
		}
	}
	return out, nil
}

// reviewThread is a review thread as GraphQL names it.
type reviewThread struct {
	ID       string
	Resolved bool
}

// ReviewThreads maps each review comment (its REST id) to its thread.
func (h *hub) ReviewThreads(ctx context.Context, repo string, number int) (map[int64]reviewThread, error) {
	owner, name, _ := strings.Cut(repo, "/")
	var data struct {
		Repository struct {
			PullRequest struct {
				ReviewThreads struct {
					Nodes []struct {
						ID         string `json:"id"`
						IsResolved bool   `json:"isResolved"`
						Comments   struct {
							Nodes []struct {
								DatabaseID int64 `json:"databaseId"`
							} `json:"nodes"`
						} `json:"comments"`
					} `json:"nodes"`
				} `json:"reviewThreads"`
			} `json:"pullRequest"`
		} `json:"repository"`
	}
	err := h.graphql(ctx, "review threads",
		`query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { pullRequest(number: $number) {
			reviewThreads(first: 100) { nodes { id isResolved comments(first: 100) { nodes { databaseId } } } } } } }`,
		map[string]any{"owner": owner, "name": name, "number": number}, &data)
	if err != nil {
		return nil, err
	}
	out := map[int64]reviewThread{}
	for _, t := range data.Repository.PullRequest.ReviewThreads.Nodes {
		for _, c := range t.Comments.Nodes {
			out[c.DatabaseID] = reviewThread{ID: t.ID, Resolved: t.IsResolved}
		}
	}
	return out, nil
}

// ResolveThread resolves a review thread.
func (h *hub) ResolveThread(ctx context.Context, id string) error {
	return h.graphql(ctx, "resolve review thread",
		`mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { isResolved } } }`,
		map[string]any{"id": id}, nil)
}
