package importer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"ralph/internal/github"
)

// IssueSource is the part of the GitHub client an import uses; tests pass a
// client pointed at a fake server.
type IssueSource interface {
	Issue(ctx context.Context, repo github.Repo, number int) (github.Issue, error)
	ListIssues(ctx context.Context, repo github.Repo, f github.Filter) ([]github.Issue, error)
	SearchIssues(ctx context.Context, query string, limit int) ([]github.Issue, error)
	Comments(ctx context.Context, repo github.Repo, number, limit int) ([]github.Comment, error)
}

// DefaultComments is how many comments of the chosen issue go into the PRD.
const DefaultComments = 50

// Query says which GitHub issue to import.
type Query struct {
	// Issue names one issue; nil means "pick among those that match".
	Issue *github.IssueRef
	// Repo is the repository for "N", "#N" and lists (from --github-repo or
	// the origin remote).
	Repo                               github.Repo
	Labels                             []string
	Search, Milestone, Assignee, State string
	// Limit caps how many matching issues are fetched to choose from.
	Limit   int
	Exclude []string
	Select  string
	// Comments caps the comments read (DefaultComments when 0).
	Comments int
}

// NeedsRepo reports whether the query needs Repo: an issue given without
// its repository, a list, or a search whose words name no repo:, org: or
// user:.
func (q Query) NeedsRepo() bool {
	switch {
	case q.Issue != nil:
		return q.Issue.Repo.IsZero()
	case q.Search != "":
		for _, f := range strings.Fields(strings.ToLower(q.Search)) {
			if strings.HasPrefix(f, "repo:") || strings.HasPrefix(f, "org:") || strings.HasPrefix(f, "user:") {
				return false
			}
		}
	}
	return true
}

// Describe says in words what the query asks for, for dry runs and errors.
func (q Query) Describe() string {
	if q.Issue != nil {
		ref := *q.Issue
		if ref.Repo.IsZero() {
			ref.Repo = q.Repo
		}
		return "issue " + ref.String()
	}
	var parts []string
	if q.Search != "" {
		parts = append(parts, fmt.Sprintf("matching %q", q.Search))
	}
	if len(q.Labels) > 0 {
		parts = append(parts, "labelled "+strings.Join(q.Labels, " and "))
	}
	if q.Milestone != "" {
		parts = append(parts, "in milestone "+q.Milestone)
	}
	if q.Assignee != "" {
		parts = append(parts, "assigned to "+q.Assignee)
	}
	state := q.State
	if state == "" {
		state = "open"
	}
	where := ""
	if !q.Repo.IsZero() {
		where = " in " + q.Repo.String()
	}
	return strings.TrimSpace(state + " issues" + where + " " + strings.Join(parts, ", "))
}

// Found is the outcome of a query: every candidate, the chosen one, its
// comments and the PRD made of them.
type Found struct {
	Candidates []Candidate
	Chosen     int
	Comments   []github.Comment
	Doc        Document
}

// Issue is the chosen issue.
func (f Found) Issue() github.Issue { return f.Candidates[f.Chosen].Issue }

// FetchIssue runs the query against GitHub, selects one issue and turns it
// into a Document.
func FetchIssue(ctx context.Context, src IssueSource, q Query) (Found, error) {
	if q.NeedsRepo() && q.Repo.IsZero() {
		return Found{}, errors.New("no repository: give owner/repo#N, --github-repo owner/repo, or run in a clone whose origin is on GitHub")
	}
	var issues []github.Issue
	switch {
	case q.Issue != nil:
		repo := q.Issue.Repo
		if repo.IsZero() {
			repo = q.Repo
		}
		is, err := src.Issue(ctx, repo, q.Issue.Number)
		if err != nil {
			return Found{}, err
		}
		issues = []github.Issue{is}
	case q.Search != "":
		words := q.Search
		for _, l := range q.Labels {
			words += " label:" + quoteQualifier(l)
		}
		if q.Milestone != "" {
			words += " milestone:" + quoteQualifier(q.Milestone)
		}
		if q.Assignee != "" {
			words += " assignee:" + strings.TrimPrefix(q.Assignee, "@")
		}
		var err error
		if issues, err = src.SearchIssues(ctx, github.SearchQuery(words, q.Repo, q.State), q.Limit); err != nil {
			return Found{}, err
		}
	default:
		var err error
		issues, err = src.ListIssues(ctx, q.Repo, github.Filter{Labels: q.Labels, Milestone: q.Milestone, Assignee: q.Assignee, State: q.State, Limit: q.Limit})
		if err != nil {
			return Found{}, err
		}
	}
	cands, chosen, err := Select(issues, q.Select, q.Exclude)
	if err != nil {
		if q.Issue != nil && len(cands) == 1 {
			return Found{Candidates: cands, Chosen: -1}, fmt.Errorf("%s carries the excluded label %q", cands[0].Issue.Ref(), cands[0].Excluded)
		}
		return Found{Candidates: cands, Chosen: -1}, &NoMatchError{Query: q.Describe(), Why: err.Error()}
	}
	f := Found{Candidates: cands, Chosen: chosen}
	is := f.Issue()
	if is.Comments > 0 {
		limit := q.Comments
		if limit <= 0 {
			limit = DefaultComments
		}
		if f.Comments, err = src.Comments(ctx, is.Repo, is.Number, limit); err != nil {
			return Found{}, fmt.Errorf("comments of %s: %w", is.Ref(), err)
		}
	}
	f.Doc = IssueDocument(is, f.Comments)
	return f, nil
}

// NoMatchError says that a list or search found nothing to import.
type NoMatchError struct {
	Query string
	Why   string
}

func (e *NoMatchError) Error() string { return e.Why + ": " + e.Query }

// quoteQualifier quotes a search qualifier's value when it has spaces.
func quoteQualifier(v string) string {
	if strings.ContainsAny(v, " \t") {
		return strconv.Quote(v)
	}
	return v
}
