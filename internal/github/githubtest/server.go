// Package githubtest is a fake GitHub REST API for tests: issues (get, list
// by labels/milestone/assignee/state, search), milestones and comments, with
// Link-header pagination, an optional token check and a switchable rate
// limit. It binds to 127.0.0.1 and is imported only by tests; ralph never
// talks to the real service in its test suite.
package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Issue is one issue (or pull request) of a repository.
type Issue struct {
	Number    int
	Title     string
	Body      string
	State     string // default "open"
	Labels    []string
	Milestone string
	Assignees []string
	Author    string
	Created   time.Time
	PR        bool
	Comments  []Comment
}

// Comment is one issue comment.
type Comment struct {
	// ID is the comment's id, unique in the server (0: numbered by its
	// place in the issue, for read-only fixtures).
	ID      int64
	Author  string
	Body    string
	Created time.Time
}

// Data is what the fake serves.
type Data struct {
	// Repos maps "owner/name" to its issues.
	Repos map[string][]Issue
	// Token, when set, must come as "Authorization: Bearer <Token>";
	// anything else is a 401.
	Token string
	// MaxPerPage caps per_page so that tests see several pages (default
	// 100, GitHub's own cap).
	MaxPerPage int
	// PathPrefix is where the API lives, e.g. "/api/v3" for an
	// enterprise-style root.
	PathPrefix string

	// The rest serves requests (writes.go): who the token is, who may
	// write to which repository, where a repository is cloned from.
	//
	// Login is the token's user (GET /user); default "ralph-bot".
	Login string
	// Permissions maps "owner/name/user" to admin, maintain, write,
	// triage or read; anyone else has "none".
	Permissions map[string]string
	// CloneURLs maps "owner/name" to the repository's clone_url.
	CloneURLs map[string]string
	// DefaultBranch of every repository; default "main".
	DefaultBranch string
}

// Request is what the fake saw.
type Request struct {
	Path, Query   string
	Authorization string
	Accept        string
	APIVersion    string
	UserAgent     string
}

// Server is a running fake.
type Server struct {
	// URL is the API root to give a client (with PathPrefix).
	URL string

	data Data
	srv  *httptest.Server

	mu          sync.Mutex
	dmu         sync.Mutex // the data, which writes change
	nextID      int64
	pulls       map[string][]Pull
	readied     []int                 // pull requests marked ready for review (graphql.go)
	resolved    map[string]bool       // review threads resolved, by id (graphql.go)
	checks      map[string][]CheckRun // by "owner/name@sha" (pulls.go)
	statuses    map[string][]Status
	requests    []Request
	rateLimited time.Time // zero: not limited; else the reset time
	retryAfter  int
}

// TB is the part of testing.TB the fake needs.
type TB interface {
	Helper()
	Cleanup(func())
}

// Start serves data until the test ends.
func Start(t TB, data Data) *Server {
	t.Helper()
	if data.MaxPerPage <= 0 {
		data.MaxPerPage = 100
	}
	s := &Server{data: data}
	// Assigned before Start, so the handlers' reads of s.srv happen after
	// the write (NewServer would start serving first).
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Start()
	s.URL = s.srv.URL + data.PathPrefix
	t.Cleanup(s.srv.Close)
	return s
}

// RateLimit makes every later request a 403 with x-ratelimit-remaining: 0
// and the given reset; a zero time lifts it.
func (s *Server) RateLimit(reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimited = reset
}

// SecondaryLimit makes every later request a 429 with Retry-After seconds
// (0 lifts it).
func (s *Server) SecondaryLimit(seconds int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retryAfter = seconds
}

// Requests returns what the fake was asked, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Query: r.URL.RawQuery,
		Authorization: r.Header.Get("Authorization"), Accept: r.Header.Get("Accept"), APIVersion: r.Header.Get("X-GitHub-Api-Version"), UserAgent: r.Header.Get("User-Agent")})
	limited, retry := s.rateLimited, s.retryAfter
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch {
	case s.data.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.data.Token:
		fail(w, http.StatusUnauthorized, "Bad credentials")
		return
	case !limited.IsZero():
		w.Header().Set("X-Ratelimit-Limit", "60")
		w.Header().Set("X-Ratelimit-Remaining", "0")
		w.Header().Set("X-Ratelimit-Reset", strconv.FormatInt(limited.Unix(), 10))
		w.Header().Set("X-Ratelimit-Resource", "core")
		fail(w, http.StatusForbidden, "API rate limit exceeded for 127.0.0.1.")
		return
	case retry > 0:
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		fail(w, http.StatusTooManyRequests, "You have exceeded a secondary rate limit.")
		return
	}
	// GraphQL lives beside the REST root: /graphql, or /api/graphql on an
	// Enterprise server whose REST root is /api/v3.
	if r.URL.Path == strings.TrimSuffix(strings.TrimSuffix(s.data.PathPrefix, "/"), "/v3")+"/graphql" {
		s.dmu.Lock()
		defer s.dmu.Unlock()
		s.graphql(w, r)
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, s.data.PathPrefix)
	if !ok {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	p := strings.Split(strings.Trim(path, "/"), "/")
	q := r.URL.Query()
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if s.write(w, r, p) {
		return
	}
	if r.Method != http.MethodGet {
		fail(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	switch {
	case len(p) == 2 && p[0] == "search" && p[1] == "issues":
		s.search(w, r, q)
	case len(p) >= 4 && p[0] == "repos":
		issues, ok := s.data.Repos[p[1]+"/"+p[2]]
		if !ok {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		s.repo(w, r, p[1]+"/"+p[2], issues, p[3:], q)
	default:
		fail(w, http.StatusNotFound, "Not Found")
	}
}

func (s *Server) repo(w http.ResponseWriter, r *http.Request, name string, issues []Issue, rest []string, q url.Values) {
	switch {
	case len(rest) == 1 && rest[0] == "issues":
		var out []any
		for _, is := range issues {
			if s.matches(is, issues, q) {
				out = append(out, s.issueJSON(name, is))
			}
		}
		s.page(w, r, q, out)
	case len(rest) == 1 && rest[0] == "milestones":
		seen := map[string]bool{}
		var out []any
		for _, is := range issues {
			if is.Milestone != "" && !seen[is.Milestone] {
				seen[is.Milestone] = true
				out = append(out, map[string]any{"number": milestoneNumber(issues, is.Milestone), "title": is.Milestone, "state": "open"})
			}
		}
		s.page(w, r, q, out)
	case len(rest) >= 2 && rest[0] == "issues":
		n, _ := strconv.Atoi(rest[1])
		i := slices.IndexFunc(issues, func(is Issue) bool { return is.Number == n })
		if i < 0 || len(rest) > 3 || (len(rest) == 3 && rest[2] != "comments") {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		if len(rest) == 2 {
			writeJSON(w, s.issueJSON(name, issues[i]))
			return
		}
		var out []any
		for k, c := range issues[i].Comments {
			id := c.ID
			if id == 0 {
				id = int64(k + 1)
			}
			out = append(out, map[string]any{"id": id, "body": c.Body, "user": map[string]any{"login": c.Author},
				"created_at": c.Created.UTC().Format(time.RFC3339), "html_url": fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", name, n, id)})
		}
		s.page(w, r, q, out)
	default:
		fail(w, http.StatusNotFound, "Not Found")
	}
}

// matches applies the list endpoint's filters.
func (s *Server) matches(is Issue, issues []Issue, q url.Values) bool {
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	if state != "all" && issueState(is) != state {
		return false
	}
	for _, l := range strings.Split(q.Get("labels"), ",") {
		if l != "" && !slices.ContainsFunc(is.Labels, func(x string) bool { return strings.EqualFold(x, l) }) {
			return false
		}
	}
	switch m := q.Get("milestone"); m {
	case "":
	case "*":
		if is.Milestone == "" {
			return false
		}
	case "none":
		if is.Milestone != "" {
			return false
		}
	default:
		if n, err := strconv.Atoi(m); err != nil || is.Milestone == "" || n != milestoneNumber(issues, is.Milestone) {
			return false
		}
	}
	switch a := q.Get("assignee"); a {
	case "":
	case "*":
		return len(is.Assignees) > 0
	case "none":
		return len(is.Assignees) == 0
	default:
		return slices.Contains(is.Assignees, a)
	}
	return true
}

// search understands repo:, is:issue/is:pr, state:/is:open/is:closed,
// label:, milestone:, assignee: and plain words (all must appear in the
// title or body).
func (s *Server) search(w http.ResponseWriter, r *http.Request, q url.Values) {
	if q.Get("q") == "" {
		fail(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	var out []any
	terms := strings.Fields(q.Get("q"))
	for name, issues := range sortedRepos(s.data.Repos) {
		for _, is := range issues {
			if searchMatch(name, is, terms) {
				out = append(out, s.issueJSON(name, is))
			}
		}
	}
	s.pageWith(w, r, q, out, func(items []any) any {
		return map[string]any{"total_count": len(out), "incomplete_results": false, "items": items}
	})
}

func searchMatch(repo string, is Issue, terms []string) bool {
	text := strings.ToLower(is.Title + " " + is.Body)
	for _, t := range terms {
		k, v, qualified := strings.Cut(t, ":")
		v = strings.Trim(v, `"`)
		ok := true
		switch {
		case !qualified:
			ok = strings.Contains(text, strings.ToLower(t))
		case k == "repo":
			ok = strings.EqualFold(repo, v)
		case k == "is" && (v == "issue" || v == "pr"):
			ok = is.PR == (v == "pr")
		case k == "is" || k == "state":
			ok = issueState(is) == v
		case k == "label":
			ok = slices.ContainsFunc(is.Labels, func(x string) bool { return strings.EqualFold(x, v) })
		case k == "milestone":
			ok = strings.EqualFold(is.Milestone, v)
		case k == "assignee":
			ok = slices.Contains(is.Assignees, v)
		default:
			ok = strings.Contains(text, strings.ToLower(t))
		}
		if !ok {
			return false
		}
	}
	return true
}

func (s *Server) page(w http.ResponseWriter, r *http.Request, q url.Values, all []any) {
	s.pageWith(w, r, q, all, func(items []any) any { return items })
}

// pageWith serves one page of all and sets the Link header GitHub sends.
func (s *Server) pageWith(w http.ResponseWriter, r *http.Request, q url.Values, all []any, wrap func([]any) any) {
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, s.data.MaxPerPage)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	last := max((len(all)+per-1)/per, 1)
	lo, hi := min((page-1)*per, len(all)), min(page*per, len(all))
	link := func(p int, rel string) string {
		qq := url.Values{}
		for k, v := range q {
			qq[k] = v
		}
		qq.Set("page", strconv.Itoa(p))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, s.srv.URL, r.URL.Path, qq.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	items := all[lo:hi]
	if items == nil {
		items = []any{}
	}
	writeJSON(w, wrap(items))
}

func (s *Server) issueJSON(repo string, is Issue) map[string]any {
	labels := []any{}
	for _, l := range is.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	assignees := []any{}
	for _, a := range is.Assignees {
		assignees = append(assignees, map[string]any{"login": a})
	}
	m := map[string]any{
		"number": is.Number, "title": is.Title, "body": is.Body, "state": issueState(is),
		"html_url":       fmt.Sprintf("https://github.com/%s/issues/%d", repo, is.Number),
		"repository_url": s.srv.URL + s.data.PathPrefix + "/repos/" + repo,
		"labels":         labels, "assignees": assignees, "comments": len(is.Comments),
		"user":       map[string]any{"login": is.Author},
		"created_at": is.Created.UTC().Format(time.RFC3339), "updated_at": is.Created.UTC().Format(time.RFC3339),
		"milestone": nil,
	}
	if is.Body == "" {
		m["body"] = nil
	}
	if is.Milestone != "" {
		m["milestone"] = map[string]any{"number": milestoneNumber(s.data.Repos[repo], is.Milestone), "title": is.Milestone}
	}
	if is.PR {
		m["pull_request"] = map[string]any{"url": "https://example.invalid/pull"}
	}
	return m
}

func issueState(is Issue) string {
	if is.State == "" {
		return "open"
	}
	return is.State
}

// milestoneNumber numbers milestones by first appearance in issues.
func milestoneNumber(issues []Issue, title string) int {
	var seen []string
	for _, is := range issues {
		if is.Milestone != "" && !slices.Contains(seen, is.Milestone) {
			seen = append(seen, is.Milestone)
		}
	}
	return slices.Index(seen, title) + 1
}

func sortedRepos(repos map[string][]Issue) func(func(string, []Issue) bool) {
	return func(yield func(string, []Issue) bool) {
		names := make([]string, 0, len(repos))
		for n := range repos {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if !yield(n, repos[n]) {
				return
			}
		}
	}
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.WriteHeader(status)
	writeJSON(w, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}

func writeJSON(w http.ResponseWriter, v any) {
	_ = json.NewEncoder(w).Encode(v)
}
