package requests

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"ralph/internal/github/githubtest"
)

func newTestService(t *testing.T) *Service {
	t.Helper()
	srv := githubtest.Start(t, githubtest.Data{Repos: map[string][]githubtest.Issue{"acme/app": nil}, Token: "tok",
		Permissions: map[string]string{"acme/app/alice": "maintain", "acme/app/tess": "triage"}})
	return newTestServiceAt(t, srv.URL)
}

// newTestServiceAt is a service on the fake GitHub at api.
func newTestServiceAt(t *testing.T, api string) *Service {
	t.Helper()
	s, err := New(Config{GitHubToken: "tok", GitHubAPIURL: api, Repos: []string{"acme/app"}, Label: "ralph", WebhookSecret: "s3cret"},
		Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s.hub.sleep = func(context.Context, time.Duration) error { return nil }
	if err := s.Open(filepath.Join(t.TempDir(), "requests.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func deliver(s *Service, event, id, body, secret string) int {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	req := httptest.NewRequest("POST", GitHubWebhookPath, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	if secret != "" {
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	w := httptest.NewRecorder()
	s.Routes()[GitHubWebhookPath].ServeHTTP(w, req)
	return w.Code
}

func issueEvent(repo, author string) string {
	return `{"action":"opened","repository":{"full_name":"` + repo + `"},"issue":{"number":7,"title":"Add X","body":"b","state":"open",` +
		`"labels":[{"name":"ralph"}],"user":{"login":"` + author + `"}}}`
}

func TestGitHubWebhook(t *testing.T) {
	s := newTestService(t)
	requests := func() int { all, _ := s.store.All(); return len(all) }
	for _, tc := range []struct {
		name, id, body, secret string
		want, stored           int
	}{
		{"forged", "1", issueEvent("acme/app", "alice"), "guess", http.StatusUnauthorized, 0},
		{"unsigned", "2", issueEvent("acme/app", "alice"), "", http.StatusUnauthorized, 0},
		{"unconfigured repository", "3", issueEvent("other/repo", "alice"), "s3cret", http.StatusAccepted, 0},
		{"no write access (triage)", "4", issueEvent("acme/app", "tess"), "s3cret", http.StatusAccepted, 0},
		{"maintainer", "5", issueEvent("acme/app", "alice"), "s3cret", http.StatusAccepted, 1},
		{"redelivery", "5", issueEvent("acme/app", "alice"), "s3cret", http.StatusOK, 1},
		{"same issue, new delivery", "6", issueEvent("acme/app", "alice"), "s3cret", http.StatusAccepted, 1},
		{"ping", "7", `{"zen":"hi","hook_id":1}`, "s3cret", http.StatusAccepted, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := deliver(s, map[bool]string{true: "ping", false: "issues"}[tc.name == "ping"], tc.id, tc.body, tc.secret); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
			if n := requests(); n != tc.stored {
				t.Errorf("%d requests stored, want %d", n, tc.stored)
			}
		})
	}
	r, err := s.store.Get("github:acme/app#7")
	if err != nil || r.Session != "gh-acme-app-7" || r.Branch != "ralph/github-7" {
		t.Errorf("request %+v, %v", r, err)
	}
}

func TestFromEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	if _, on, err := FromEnv(env(nil)); on || err != nil {
		t.Errorf("nothing set: on %v, %v", on, err)
	}
	cfg, on, err := FromEnv(env(map[string]string{"GITHUB_TOKEN": "t", "RALPH_GITHUB_REPOS": "a/b, c/d"}))
	if !on || err != nil || len(cfg.Repos) != 2 || cfg.Label != "ralph" || !cfg.Sandbox || cfg.Poll != time.Minute {
		t.Errorf("%+v %v %v", cfg, on, err)
	}
	for _, bad := range []map[string]string{
		{"RALPH_GITHUB_REPOS": "a/b"}, // no token
		{"GITHUB_TOKEN": "t", "RALPH_GITHUB_REPOS": "nope"},
		{"GITHUB_TOKEN": "t", "SLACK_BOT_TOKEN": "x", "SLACK_APP_TOKEN": "y", "RALPH_SLACK_REPO": "a/b"}, // no channels
		{"GITHUB_TOKEN": "t", "RALPH_GITHUB_REPOS": "a/b", "RALPH_REQUEST_SANDBOX": "maybe"},
	} {
		if _, _, err := FromEnv(env(bad)); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
