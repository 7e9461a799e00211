package github

import (
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is wrapped by every 404. GitHub answers 404, not 403, for a
// private repository the token cannot see, so the messages say both.
var ErrNotFound = errors.New("not found")

// NotFoundError names what was not found, e.g. "issue owner/repo#7".
type NotFoundError struct {
	What string
}

func (e *NotFoundError) Error() string {
	return e.What + " not found (or the token cannot see it)"
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// RateLimitError is a 403 or 429 because the API rate limit is used up
// (x-ratelimit-remaining: 0) or a secondary limit asked to retry later
// (Retry-After). Callers branch on it with errors.As to wait or to exit with
// a distinct code.
type RateLimitError struct {
	// Reset is when requests are allowed again; zero when GitHub did not
	// say.
	Reset time.Time
	// Limit is the request budget of the window (x-ratelimit-limit), 0 when
	// unknown; Resource is the budget's name ("core", "search").
	Limit    int
	Resource string
	// Secondary is set for a secondary (abuse) limit: too many requests at
	// once rather than too many per hour.
	Secondary bool
	// Anonymous is set when no token was sent: a token raises the limit.
	Anonymous bool
}

func (e *RateLimitError) Error() string {
	msg := "GitHub API rate limit exceeded"
	if e.Secondary {
		msg = "GitHub API secondary rate limit hit"
	}
	if e.Resource != "" {
		msg += " (" + e.Resource + ")"
	}
	if !e.Reset.IsZero() {
		msg += "; try again after " + e.Reset.UTC().Format(time.RFC3339)
	}
	if e.Anonymous {
		msg += "; set GITHUB_TOKEN (or log in with gh) for a higher limit"
	}
	return msg
}

// APIError is any other unsuccessful answer.
type APIError struct {
	Status  int
	Message string // GitHub's "message", with the "errors" details
	Path    string // the request path, without the host or the query
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("GitHub API %s: HTTP %d", e.Path, e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	switch e.Status {
	case 401:
		msg += " (check GITHUB_TOKEN, GH_TOKEN or `gh auth status`)"
	case 403:
		msg += " (the token may lack access to this repository)"
	}
	return msg
}
