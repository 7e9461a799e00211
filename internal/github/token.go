package github

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"time"

	"ralph/internal/redact"
)

// TokenSource finds the API token without ever printing it. The zero value
// uses the real environment lookups it is given and the real gh CLI.
type TokenSource struct {
	// Getenv reads the environment (required).
	Getenv func(string) string
	// GhToken runs `gh auth token [--hostname HOST]` and returns its
	// output; nil uses the gh CLI on PATH. Tests replace it.
	GhToken func(ctx context.Context, host string) (string, error)
}

// Token returns the token for a web host and where it came from (an
// environment variable's name or "gh auth token"); both "" when there is
// none, which means anonymous requests. Enterprise hosts first try gh's own
// GH_ENTERPRISE_TOKEN / GITHUB_ENTERPRISE_TOKEN, since a github.com token
// is useless there.
func (s TokenSource) Token(ctx context.Context, host string) (token, from string) {
	names := []string{"GITHUB_TOKEN", "GH_TOKEN"}
	if host != "" && webHost(host) != DefaultHost {
		names = append([]string{"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}, names...)
	}
	for _, n := range names {
		if v := strings.TrimSpace(s.Getenv(n)); v != "" {
			return v, n
		}
	}
	gh := s.GhToken
	if gh == nil {
		gh = ghAuthToken
	}
	// gh failing (not installed, not logged in) is not an error: public
	// repositories work without a token.
	if v, err := gh(ctx, host); err == nil && strings.TrimSpace(v) != "" {
		// Not in the environment, so nothing has registered it yet.
		redact.Add(strings.TrimSpace(v))
		return strings.TrimSpace(v), "gh auth token"
	}
	return "", ""
}

// ghAuthToken asks the gh CLI for its stored token. Its stderr is dropped
// and its output returned only to the caller, never in an error.
func ghAuthToken(ctx context.Context, host string) (string, error) {
	path, err := exec.LookPath("gh")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args := []string{"auth", "token"}
	if host != "" {
		args = append(args, "--hostname", host)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return "", err
	}
	return out.String(), nil
}
