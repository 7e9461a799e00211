package github

import (
	"context"
	"errors"
	"testing"
)

func TestTokenSource(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	gh := func(tok string, err error) func(context.Context, string) (string, error) {
		return func(context.Context, string) (string, error) { return tok, err }
	}
	tests := []struct {
		name      string
		env       map[string]string
		gh        func(context.Context, string) (string, error)
		host      string
		wantToken string
		wantFrom  string
	}{
		{"GITHUB_TOKEN first", map[string]string{"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}, gh("c", nil), "", "a", "GITHUB_TOKEN"},
		{"GH_TOKEN next", map[string]string{"GH_TOKEN": " b \n"}, gh("c", nil), "github.com", "b", "GH_TOKEN"},
		{"gh CLI last", nil, gh("c\n", nil), "", "c", "gh auth token"},
		{"gh failing means anonymous", nil, gh("", errors.New("not logged in")), "", "", ""},
		{"enterprise token first on an enterprise host", map[string]string{"GITHUB_TOKEN": "a", "GH_ENTERPRISE_TOKEN": "e"}, nil, "ghe.example.com", "e", "GH_ENTERPRISE_TOKEN"},
		{"enterprise token ignored on github.com", map[string]string{"GITHUB_TOKEN": "a", "GH_ENTERPRISE_TOKEN": "e"}, nil, "github.com", "a", "GITHUB_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := TokenSource{Getenv: env(tt.env), GhToken: tt.gh}
			if src.GhToken == nil {
				src.GhToken = gh("", errors.New("no gh"))
			}
			tok, from := src.Token(context.Background(), tt.host)
			if tok != tt.wantToken || from != tt.wantFrom {
				t.Errorf("got %q from %q, want %q from %q", tok, from, tt.wantToken, tt.wantFrom)
			}
		})
	}
}

func TestGhAskedForTheHost(t *testing.T) {
	var asked string
	src := TokenSource{Getenv: func(string) string { return "" }, GhToken: func(_ context.Context, host string) (string, error) {
		asked = host
		return "t", nil
	}}
	src.Token(context.Background(), "ghe.example.com")
	if asked != "ghe.example.com" {
		t.Errorf("gh asked for %q", asked)
	}
}
