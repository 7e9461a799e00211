package requests

import (
	"context"
	"testing"

	"ralph/internal/github/githubtest"
)

func TestGraphQLURL(t *testing.T) {
	for rest, want := range map[string]string{
		"https://api.github.com/":           "https://api.github.com/graphql",
		"https://ghe.example.com/api/v3/":   "https://ghe.example.com/api/graphql",
		"http://127.0.0.1:4000/":            "http://127.0.0.1:4000/graphql",
		"http://127.0.0.1:4000/api/v3/":     "http://127.0.0.1:4000/api/graphql",
		"https://proxy.example.com/github/": "https://proxy.example.com/github/graphql",
	} {
		if got := graphqlURL(rest); got != want {
			t.Errorf("%s: %s, want %s", rest, got, want)
		}
	}
}

// A draft is marked ready for review over GraphQL, with the same token,
// on github.com's layout and an Enterprise server's.
func TestMarkReady(t *testing.T) {
	for _, prefix := range []string{"", "/api/v3"} {
		srv := githubtest.Start(t, githubtest.Data{Repos: map[string][]githubtest.Issue{"acme/app": nil}, Token: "tok", PathPrefix: prefix})
		h, err := newHub(srv.URL, "tok", nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		n, _, err := h.PullRequest(ctx, "acme/app", "ralph/github-1", "main", "Add X", "body", true)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := h.OpenPull(ctx, "acme/app", "ralph/github-1")
		if err != nil || pr == nil || !pr.GetDraft() || pr.GetNumber() != n {
			t.Fatalf("%q: the draft %+v, %v", prefix, pr, err)
		}
		if err := h.MarkReady(ctx, pr.GetNodeID()); err != nil {
			t.Fatalf("%q: %v", prefix, err)
		}
		if p := srv.Pulls("acme/app"); len(p) != 1 || p[0].Draft {
			t.Errorf("%q: still a draft: %+v", prefix, p)
		}
		if err := h.MarkReady(ctx, "PR_nope"); err == nil {
			t.Errorf("%q: an unknown id was accepted", prefix)
		}
	}
}
