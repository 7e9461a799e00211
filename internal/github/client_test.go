package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/github"
	"ralph/internal/github/githubtest"
)

const token = "ghp_test_token_value"

var t0 = time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)

func fixture() githubtest.Data {
	var many []githubtest.Issue
	for n := 1; n <= 7; n++ {
		many = append(many, githubtest.Issue{Number: n, Title: fmt.Sprintf("Task %d", n), Labels: []string{"ralph-task"}, Created: t0.Add(time.Duration(n) * time.Hour)})
	}
	many = append(many, githubtest.Issue{Number: 8, Title: "A pull request", Labels: []string{"ralph-task"}, PR: true})
	return githubtest.Data{
		Token:      token,
		MaxPerPage: 3,
		PathPrefix: "/api/v3",
		Repos: map[string][]githubtest.Issue{
			"octo/hello": {
				{Number: 1, Title: "Add login", Body: "Users log in.\n\n## Acceptance criteria\n- [ ] works", Labels: []string{"feature", "priority:high"},
					Milestone: "v1", Assignees: []string{"dev1"}, Author: "reporter", Created: t0,
					Comments: []githubtest.Comment{{Author: "dev1", Body: "Use OAuth.", Created: t0.Add(time.Hour)}, {Author: "reporter", Body: "Agreed.", Created: t0.Add(2 * time.Hour)}}},
				{Number: 2, Title: "Fix crash on logout", Labels: []string{"bug"}, Milestone: "v1", Created: t0.Add(24 * time.Hour)},
				{Number: 3, Title: "Old closed thing", State: "closed", Labels: []string{"feature"}, Milestone: "v2", Created: t0},
				{Number: 4, Title: "Docs for login", Labels: []string{"docs", "feature"}, Assignees: []string{"dev2"}, Milestone: "v2", Created: t0},
				{Number: 5, Title: "Login PR", PR: true, Labels: []string{"feature"}},
			},
			"octo/many": many,
		},
	}
}

func newClient(t *testing.T, srv *githubtest.Server, tok string) *github.Client {
	t.Helper()
	c, err := github.New(github.Options{BaseURL: srv.URL, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var hello = github.Repo{Owner: "octo", Name: "hello"}

func numbers(issues []github.Issue) []int {
	var out []int
	for _, is := range issues {
		out = append(out, is.Number)
	}
	return out
}

func TestGetIssue(t *testing.T) {
	srv := githubtest.Start(t, fixture())
	c := newClient(t, srv, token)
	is, err := c.Issue(context.Background(), hello, 1)
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != "Add login" || is.Milestone != "v1" || !slices.Equal(is.Labels, []string{"feature", "priority:high"}) ||
		!slices.Equal(is.Assignees, []string{"dev1"}) || is.Author != "reporter" || is.Comments != 2 || !is.CreatedAt.Equal(t0) ||
		is.URL != "https://github.com/octo/hello/issues/1" || is.Repo.String() != "octo/hello" || is.Ref() != "octo/hello#1" {
		t.Errorf("issue %+v", is)
	}
	// go-github picks the media type per endpoint (a preview for issues).
	req := srv.Requests()[0]
	if req.Path != "/api/v3/repos/octo/hello/issues/1" || req.Authorization != "Bearer "+token || req.UserAgent != "ralph" ||
		!strings.HasPrefix(req.Accept, "application/vnd.github") || req.APIVersion != github.APIVersion {
		t.Errorf("request %+v", req)
	}

	cs, err := c.Comments(context.Background(), hello, 1, 0)
	if err != nil || len(cs) != 2 || cs[0].Author != "dev1" || cs[1].Body != "Agreed." {
		t.Errorf("comments %+v %v", cs, err)
	}
}

func TestIssueErrors(t *testing.T) {
	srv := githubtest.Start(t, fixture())
	c := newClient(t, srv, token)
	ctx := context.Background()

	_, err := c.Issue(ctx, hello, 99)
	if !errors.Is(err, github.ErrNotFound) || !strings.Contains(err.Error(), "issue octo/hello#99 not found") {
		t.Errorf("404: %v", err)
	}
	_, err = c.Issue(ctx, github.Repo{Owner: "octo", Name: "nope"}, 1)
	if !strings.Contains(err.Error(), "issue octo/nope#1 not found") {
		t.Errorf("unknown repo: %v", err)
	}
	_, err = c.ListIssues(ctx, github.Repo{Owner: "octo", Name: "nope"}, github.Filter{})
	if !strings.Contains(err.Error(), "repository octo/nope not found") {
		t.Errorf("unknown repo list: %v", err)
	}
	_, err = c.Issue(ctx, hello, 5)
	if err == nil || !strings.Contains(err.Error(), "pull request") {
		t.Errorf("PR: %v", err)
	}

	// A wrong token is a 401 that says where tokens come from and never
	// repeats the token.
	bad := newClient(t, srv, "wrong-secret-token")
	_, err = bad.Issue(ctx, hello, 1)
	var ae *github.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || !strings.Contains(err.Error(), "GITHUB_TOKEN") || strings.Contains(err.Error(), "wrong-secret-token") {
		t.Errorf("401: %v", err)
	}
}

func TestRateLimit(t *testing.T) {
	srv := githubtest.Start(t, fixture())
	c := newClient(t, srv, token)
	reset := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
	srv.RateLimit(reset)
	_, err := c.Issue(context.Background(), hello, 1)
	var rl *github.RateLimitError
	if !errors.As(err, &rl) || !rl.Reset.Equal(reset) || rl.Limit != 60 || rl.Resource != "core" || rl.Secondary || rl.Anonymous {
		t.Fatalf("rate limit: %#v (%v)", rl, err)
	}
	if !strings.Contains(err.Error(), "2026-03-01T12:30:00Z") {
		t.Errorf("message lacks the reset time: %v", err)
	}
	// Lists hit it too, whatever page they are on.
	if _, err := c.ListIssues(context.Background(), hello, github.Filter{}); !errors.As(err, &rl) {
		t.Errorf("list: %v", err)
	}

	srv.RateLimit(time.Time{})
	srv.SecondaryLimit(90)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c2, _ := github.New(github.Options{BaseURL: srv.URL, Token: token, Now: func() time.Time { return now }})
	_, err = c2.SearchIssues(context.Background(), "login", 5)
	if !errors.As(err, &rl) || !rl.Secondary || !rl.Reset.Equal(now.Add(90*time.Second)) {
		t.Errorf("secondary: %#v (%v)", rl, err)
	}
}

func TestAnonymousRateLimitSuggestsAToken(t *testing.T) {
	d := fixture()
	d.Token = ""
	srv := githubtest.Start(t, d)
	srv.RateLimit(t0)
	_, err := newClient(t, srv, "").Issue(context.Background(), hello, 1)
	if err == nil || !strings.Contains(err.Error(), "set GITHUB_TOKEN") {
		t.Errorf("got %v", err)
	}
	if a := srv.Requests()[0].Authorization; a != "" {
		t.Errorf("anonymous request sent Authorization %q", a)
	}
}

func TestListIssues(t *testing.T) {
	srv := githubtest.Start(t, fixture())
	c := newClient(t, srv, token)
	ctx := context.Background()
	tests := []struct {
		name string
		f    github.Filter
		want []int
	}{
		{"open, PRs left out", github.Filter{}, []int{1, 2, 4}},
		{"label", github.Filter{Labels: []string{"feature"}}, []int{1, 4}},
		{"two labels", github.Filter{Labels: []string{"feature", "docs"}}, []int{4}},
		{"milestone by title", github.Filter{Milestone: "v1"}, []int{1, 2}},
		{"milestone title, any case", github.Filter{Milestone: "V2", State: "all"}, []int{3, 4}},
		{"milestone number", github.Filter{Milestone: "2"}, []int{4}},
		{"no milestone", github.Filter{Milestone: "none"}, nil},
		{"assignee", github.Filter{Assignee: "@dev2"}, []int{4}},
		{"nobody assigned", github.Filter{Assignee: "none"}, []int{2}},
		{"closed", github.Filter{State: "closed"}, []int{3}},
		{"limit", github.Filter{Limit: 2}, []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.ListIssues(ctx, hello, tt.f)
			if err != nil || !slices.Equal(numbers(got), tt.want) {
				t.Errorf("got %v %v, want %v", numbers(got), err, tt.want)
			}
		})
	}
	_, err := c.ListIssues(ctx, hello, github.Filter{Milestone: "v9"})
	if !errors.Is(err, github.ErrNotFound) || !strings.Contains(err.Error(), `milestone "v9" in octo/hello`) {
		t.Errorf("unknown milestone: %v", err)
	}
}

func TestPagination(t *testing.T) {
	srv := githubtest.Start(t, fixture()) // 3 per page
	c := newClient(t, srv, token)
	many := github.Repo{Owner: "octo", Name: "many"}

	got, err := c.ListIssues(context.Background(), many, github.Filter{Labels: []string{"ralph-task"}, Limit: 100})
	if err != nil || !slices.Equal(numbers(got), []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("got %v %v", numbers(got), err)
	}
	var pages []string
	for _, r := range srv.Requests() {
		pages = append(pages, r.Query)
	}
	if len(pages) != 3 || !strings.Contains(pages[2], "page=3") {
		t.Errorf("requests %q, want three pages followed through Link", pages)
	}
	for _, r := range srv.Requests() {
		if r.Authorization != "Bearer "+token {
			t.Errorf("page request without the token: %+v", r)
		}
	}

	// A limit stops early: 4 items need two pages of 3, not three.
	before := len(srv.Requests())
	got, err = c.ListIssues(context.Background(), many, github.Filter{Limit: 4})
	if err != nil || !slices.Equal(numbers(got), []int{1, 2, 3, 4}) || len(srv.Requests())-before != 2 {
		t.Errorf("limit 4: %v %v after %d requests", numbers(got), err, len(srv.Requests())-before)
	}

	// Search pages the same way.
	got, err = c.SearchIssues(context.Background(), github.SearchQuery("Task", many, ""), 10)
	if err != nil || !slices.Equal(numbers(got), []int{1, 2, 3, 4, 5, 6, 7}) || got[0].Repo.String() != "octo/many" {
		t.Errorf("search: %v %v", numbers(got), err)
	}
}

func TestSearch(t *testing.T) {
	srv := githubtest.Start(t, fixture())
	c := newClient(t, srv, token)
	got, err := c.SearchIssues(context.Background(), github.SearchQuery("login label:feature", hello, "open"), 10)
	if err != nil || !slices.Equal(numbers(got), []int{1, 4}) {
		t.Fatalf("got %v %v", numbers(got), err)
	}
	last := srv.Requests()[len(srv.Requests())-1]
	if last.Path != "/api/v3/search/issues" || !strings.Contains(last.Query, "repo%3Aocto%2Fhello") {
		t.Errorf("request %+v", last)
	}
}

func TestSearchQuery(t *testing.T) {
	tests := []struct{ words, state, want string }{
		{"login bug", "", "login bug repo:octo/hello is:issue state:open"},
		{"login", "all", "login repo:octo/hello is:issue"},
		{"login repo:a/b", "closed", "login repo:a/b is:issue state:closed"},
		{"org:acme is:open crash", "", "org:acme is:open crash is:issue"},
		{"is:pr review", "", "is:pr review repo:octo/hello state:open"},
		{"label:x state:closed", "", "label:x state:closed repo:octo/hello is:issue"},
	}
	for _, tt := range tests {
		if got := github.SearchQuery(tt.words, hello, tt.state); got != tt.want {
			t.Errorf("SearchQuery(%q, %q) = %q, want %q", tt.words, tt.state, got, tt.want)
		}
	}
	if got := github.SearchQuery("x", github.Repo{}, ""); got != "x is:issue state:open" {
		t.Errorf("no repo: %q", got)
	}
}

// The token goes to the configured API host only: a Link header pointing
// elsewhere is refused before anything is sent there.
func TestForeignLinkRefused(t *testing.T) {
	var foreignHits int
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreignHits++
		fmt.Fprint(w, "[]")
	}))
	defer foreign.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<`+foreign.URL+`/repos/octo/hello/issues?page=2>; rel="next"`)
		fmt.Fprint(w, `[{"number":1,"title":"x"}]`)
	}))
	defer srv.Close()
	c, _ := github.New(github.Options{BaseURL: srv.URL, Token: token})
	_, err := c.ListIssues(context.Background(), hello, github.Filter{Limit: 5})
	if err == nil || !strings.Contains(err.Error(), "another host") || foreignHits != 0 {
		t.Errorf("err %v, foreign hits %d", err, foreignHits)
	}
}

// A server that echoes the request must not get the token into an error.
func TestErrorsNeverContainTheToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		fmt.Fprintf(w, `{"message":"bad header %s"}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	c, _ := github.New(github.Options{BaseURL: srv.URL, Token: token})
	_, err := c.Issue(context.Background(), hello, 1)
	var ae *github.APIError
	if err == nil || strings.Contains(err.Error(), token) || !errors.As(err, &ae) || ae.Status != 500 {
		t.Errorf("got %v", err)
	}
	if s := fmt.Sprintf("%v %+v", c, c); strings.Contains(s, token) {
		t.Errorf("formatting the client shows the token: %s", s)
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"ftp://x", "not a url", "https://user:pw@ghe.example.com/api/v3", "https://x/api?x=1"} {
		if _, err := github.New(github.Options{BaseURL: u}); err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("New(%q): %v", u, err)
		}
	}
	c, err := github.New(github.Options{BaseURL: "https://ghe.example.com/api/v3/"})
	if err != nil || c.BaseURL() != "https://ghe.example.com/api/v3" {
		t.Errorf("got %v %v", c, err)
	}
	if c, _ := github.New(github.Options{}); c.BaseURL() != "https://api.github.com" {
		t.Errorf("default base %s", c.BaseURL())
	}
}

// NewAPI is the go-github client the request service shares: the API root
// is used as given (no /api/v3 added), and the token goes to that host
// only, not to a server a redirect points at.
func TestNewAPIBaseAndTokenScope(t *testing.T) {
	var foreignAuth string
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreignAuth = r.Header.Get("Authorization")
		fmt.Fprint(w, `{"login":"elsewhere"}`)
	}))
	defer foreign.Close()
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path+" "+r.Header.Get("Authorization"))
		if r.URL.Path == "/root/user" {
			http.Redirect(w, r, foreign.URL+"/user", http.StatusFound)
			return
		}
		fmt.Fprint(w, `{"login":"me"}`)
	}))
	defer srv.Close()

	c, err := github.NewAPI(github.Options{BaseURL: srv.URL + "/root/", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.BaseURL.String(); got != srv.URL+"/root/" {
		t.Errorf("base %s", got)
	}
	u, _, err := c.Users.Get(context.Background(), "")
	if err != nil || u.GetLogin() != "elsewhere" {
		t.Fatalf("user %v %v", u, err)
	}
	if len(paths) != 1 || paths[0] != "/root/user Bearer "+token || foreignAuth != "" {
		t.Errorf("API saw %q; the redirect target got Authorization %q", paths, foreignAuth)
	}
	if _, err := github.NewAPI(github.Options{BaseURL: "ftp://x"}); err == nil {
		t.Error("ftp base accepted")
	}
}

// The answers go-github leaves as plain errors keep ralph's typed errors
// and messages.
func TestStatusErrors(t *testing.T) {
	tests := []struct {
		status  int
		headers map[string]string
		body    string
		want    string
		rate    bool
	}{
		{403, nil, `{"message":"Resource not accessible by integration"}`, "HTTP 403: Resource not accessible by integration (the token may lack access", false},
		{422, nil, `{"message":"Validation Failed","errors":[{"field":"q","code":"invalid"}]}`, "HTTP 422: Validation Failed; q invalid", false},
		{429, nil, `{"message":"slow down"}`, "GitHub API rate limit exceeded", true},
		{429, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "1767225600", "X-Ratelimit-Resource": "search"}, `{}`,
			"rate limit exceeded (search); try again after 2026-01-01T00:00:00Z", true},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tt.headers {
				w.Header().Set(k, v)
			}
			w.WriteHeader(tt.status)
			fmt.Fprint(w, tt.body)
		}))
		c, _ := github.New(github.Options{BaseURL: srv.URL, Token: token})
		_, err := c.Issue(context.Background(), hello, 1)
		var rl *github.RateLimitError
		if err == nil || !strings.Contains(err.Error(), tt.want) || errors.As(err, &rl) != tt.rate {
			t.Errorf("HTTP %d: got %v, want %q", tt.status, err, tt.want)
		}
		srv.Close()
	}
}
