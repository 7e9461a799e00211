package importer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"ralph/internal/github"
	"ralph/internal/github/githubtest"
)

func fakeGitHub(t *testing.T) *github.Client {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := githubtest.Start(t, githubtest.Data{Token: "tok", MaxPerPage: 2, Repos: map[string][]githubtest.Issue{
		"octo/hello": {
			{Number: 1, Title: "Polish the README", Labels: []string{"ralph-task", "priority:low"}, Created: t0},
			{Number: 2, Title: "Add login", Body: "Users log in with OAuth.", Labels: []string{"ralph-task", "P0"}, Milestone: "v1", Assignees: []string{"dev1"}, Created: t0.Add(time.Hour),
				Comments: []githubtest.Comment{{Author: "dev1", Body: "Use the `state` parameter.", Created: t0.Add(2 * time.Hour)}}},
			{Number: 3, Title: "Add logout", Labels: []string{"ralph-task", "P0", "blocked"}, Created: t0},
			{Number: 4, Title: "Rate limiting for login", Labels: []string{"ralph-task", "priority:high"}, Milestone: "v1", Created: t0.Add(3 * time.Hour)},
		},
	}})
	c, err := github.New(github.Options{BaseURL: srv.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFetchIssue(t *testing.T) {
	c := fakeGitHub(t)
	hello := github.Repo{Owner: "octo", Name: "hello"}
	ref := func(s string) *github.IssueRef {
		r, err := github.ParseIssueRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return &r
	}
	tests := []struct {
		name       string
		q          Query
		wantIssue  int
		wantCands  int
		wantInDoc  string
		wantErr    string
		wantNoHits bool
	}{
		{name: "one issue by number, default repo", q: Query{Issue: ref("#2"), Repo: hello}, wantIssue: 2, wantCands: 1, wantInDoc: "### Comment by dev1"},
		{name: "one issue by owner/repo#N", q: Query{Issue: ref("octo/hello#4")}, wantIssue: 4, wantCands: 1},
		{name: "one issue by URL", q: Query{Issue: ref("https://github.com/octo/hello/issues/1")}, wantIssue: 1, wantCands: 1},
		{name: "missing issue", q: Query{Issue: ref("octo/hello#99")}, wantErr: "issue octo/hello#99 not found"},
		{name: "an excluded single issue", q: Query{Issue: ref("#3"), Repo: hello, Exclude: []string{"blocked"}}, wantErr: `octo/hello#3 carries the excluded label "blocked"`},
		{name: "label, first", q: Query{Repo: hello, Labels: []string{"ralph-task"}, Select: "first"}, wantIssue: 1, wantCands: 4},
		{name: "label, priority, across pages", q: Query{Repo: hello, Labels: []string{"ralph-task"}, Select: "priority", Exclude: []string{"blocked"}}, wantIssue: 2, wantCands: 4, wantInDoc: "Users log in with OAuth."},
		{name: "limit", q: Query{Repo: hello, Labels: []string{"ralph-task"}, Select: "priority", Limit: 1}, wantIssue: 1, wantCands: 1},
		{name: "milestone", q: Query{Repo: hello, Milestone: "v1", Select: "priority"}, wantIssue: 2, wantCands: 2},
		{name: "assignee", q: Query{Repo: hello, Assignee: "dev1"}, wantIssue: 2, wantCands: 1},
		{name: "search with label", q: Query{Repo: hello, Search: "login", Labels: []string{"priority:high"}}, wantIssue: 4, wantCands: 1},
		{name: "nothing matches", q: Query{Repo: hello, Labels: []string{"nope"}}, wantErr: "no issue matched: open issues in octo/hello labelled nope", wantNoHits: true},
		{name: "no repository", q: Query{Labels: []string{"x"}}, wantErr: "no repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := FetchIssue(context.Background(), c, tt.q)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				var nm *NoMatchError
				if errors.As(err, &nm) != tt.wantNoHits {
					t.Errorf("NoMatchError: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Issue().Number != tt.wantIssue || len(f.Candidates) != tt.wantCands {
				t.Errorf("chose #%d of %d candidates, want #%d of %d", f.Issue().Number, len(f.Candidates), tt.wantIssue, tt.wantCands)
			}
			if !strings.Contains(f.Doc.Text, "# "+f.Issue().Title) || !strings.Contains(f.Doc.Text, tt.wantInDoc) {
				t.Errorf("doc:\n%s", f.Doc.Text)
			}
		})
	}
}

func TestQueryNeedsRepoAndDescribe(t *testing.T) {
	full := &github.IssueRef{Repo: github.Repo{Owner: "a", Name: "b"}, Number: 1}
	short := &github.IssueRef{Number: 1}
	tests := []struct {
		q         Query
		needs     bool
		describes string
	}{
		{Query{Issue: full}, false, "issue a/b#1"},
		{Query{Issue: short, Repo: github.Repo{Owner: "o", Name: "r"}}, true, "issue o/r#1"},
		{Query{Search: "crash org:acme"}, false, `open issues matching "crash org:acme"`},
		{Query{Search: "crash"}, true, `open issues matching "crash"`},
		{Query{Labels: []string{"a", "b"}, Milestone: "v1", Assignee: "me", State: "all", Repo: github.Repo{Owner: "o", Name: "r"}}, true, "all issues in o/r labelled a and b, in milestone v1, assigned to me"},
	}
	for _, tt := range tests {
		if tt.q.NeedsRepo() != tt.needs || tt.q.Describe() != tt.describes {
			t.Errorf("%+v: needs %v describe %q", tt.q, tt.q.NeedsRepo(), tt.q.Describe())
		}
	}
}
