// Package github is a small client of the GitHub REST API (v3), enough for
// ralph to read issues: get one, list them by label, milestone, assignee and
// state, search them, and read their comments. The base URL is configurable
// for GitHub Enterprise Server (https://HOST/api/v3). It also parses the ways
// people name issues and repositories (N, #N, owner/repo#N, issue URLs, git
// remote URLs).
//
// The token is never printed: it lives in an unexported field with a masked
// String, is sent only to the configured API host, and is scrubbed from any
// message the server sends back.
package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// APIVersion is the REST API version ralph is written against.
const APIVersion = "2022-11-28"

// DefaultLimit is how many items a list returns when no limit is given.
const DefaultLimit = 30

// maxBody bounds one response: an issue page is far smaller, and a broken
// proxy must not make ralph read without end.
const maxBody = 16 << 20

// maxPages stops a Link chain that never ends (a buggy server or proxy).
const maxPages = 100

// Options configure a Client.
type Options struct {
	// BaseURL is the API root, e.g. https://api.github.com (the default) or
	// https://ghe.example.com/api/v3.
	BaseURL string
	// Token authenticates the requests; "" sends none (public repositories
	// only, 60 requests an hour).
	Token string
	// HTTPClient defaults to a client with a 30 s timeout.
	HTTPClient *http.Client
	// Now reads the clock for Retry-After (time.Now by default).
	Now func() time.Time
	// UserAgent defaults to "ralph".
	UserAgent string
}

// Client talks to one GitHub API server.
type Client struct {
	base      *url.URL
	token     secret
	http      *http.Client
	now       func() time.Time
	userAgent string
}

// secret masks itself in any formatting, so a Client printed with %+v in a
// debug line does not leak the token.
type secret string

func (secret) String() string { return "[redacted]" }

// New checks the options and returns a client.
func New(opts Options) (*Client, error) {
	raw := opts.BaseURL
	if raw == "" {
		raw = APIBase(DefaultHost)
	}
	base, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("GitHub API URL %q: want http(s)://host[/path], e.g. https://ghe.example.com/api/v3", raw)
	}
	if base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("GitHub API URL: no credentials, query or fragment allowed (got %s://%s%s…)", base.Scheme, base.Host, base.Path)
	}
	c := &Client{base: base, token: secret(opts.Token), http: opts.HTTPClient, now: opts.Now, userAgent: opts.UserAgent}
	if c.http == nil {
		c.http = &http.Client{Timeout: 30 * time.Second}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.userAgent == "" {
		c.userAgent = "ralph"
	}
	return c, nil
}

// Format prints the client as its API root for every verb (%v, %+v, %#v):
// fmt reads unexported fields by reflection, bypassing secret's String.
func (c *Client) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "github.Client{%s}", c.base)
}

// BaseURL is the API root the client talks to.
func (c *Client) BaseURL() string { return c.base.String() }

// endpoint builds the URL of an API path (with escaped segments) and query.
func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawPath = ""
	u.RawQuery = q.Encode()
	return u.String()
}

// get fetches one URL and decodes its JSON into out; it returns the next
// page's URL from the Link header, or "".
func (c *Client) get(ctx context.Context, rawURL string, out any) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("GitHub API: bad URL: %w", err)
	}
	// The token goes to the configured server only: a Link header pointing
	// elsewhere must not collect it.
	if u.Scheme != c.base.Scheme || u.Host != c.base.Host {
		return "", fmt.Errorf("GitHub API: refusing to follow a link to another host (%s)", u.Host)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", APIVersion)
	req.Header.Set("User-Agent", c.userAgent)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+string(c.token))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", c.scrub(fmt.Errorf("GitHub API: %w", err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", fmt.Errorf("GitHub API %s: reading the answer: %w", u.Path, err)
	}
	if resp.StatusCode/100 != 2 {
		return "", c.scrub(c.statusError(resp, u.Path, body))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return "", fmt.Errorf("GitHub API %s: unexpected answer: %w", u.Path, err)
	}
	return nextLink(resp.Header.Values("Link")), nil
}

// statusError turns an unsuccessful answer into a typed error.
func (c *Client) statusError(resp *http.Response, path string, body []byte) error {
	msg := apiMessage(body)
	st := resp.StatusCode
	if st == http.StatusForbidden || st == http.StatusTooManyRequests {
		h := resp.Header
		if h.Get("X-Ratelimit-Remaining") == "0" {
			e := &RateLimitError{Resource: h.Get("X-Ratelimit-Resource"), Anonymous: c.token == ""}
			if sec, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
				e.Reset = time.Unix(sec, 0).UTC()
			}
			e.Limit, _ = strconv.Atoi(h.Get("X-Ratelimit-Limit"))
			return e
		}
		if ra := h.Get("Retry-After"); ra != "" {
			e := &RateLimitError{Secondary: true, Anonymous: c.token == ""}
			if sec, err := strconv.Atoi(ra); err == nil {
				e.Reset = c.now().Add(time.Duration(sec) * time.Second).UTC()
			}
			return e
		}
		if st == http.StatusTooManyRequests {
			return &RateLimitError{Anonymous: c.token == ""}
		}
	}
	if st == http.StatusNotFound {
		return fmt.Errorf("GitHub API %s: %w", path, ErrNotFound)
	}
	return &APIError{Status: st, Message: msg, Path: path}
}

// apiMessage reads GitHub's {"message": ..., "errors": [...]} body.
func apiMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
		Errors  []struct {
			Message string `json:"message"`
			Code    string `json:"code"`
			Field   string `json:"field"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	parts := []string{e.Message}
	for _, d := range e.Errors {
		switch {
		case d.Message != "":
			parts = append(parts, d.Message)
		case d.Code != "":
			parts = append(parts, strings.TrimSpace(d.Field+" "+d.Code))
		}
	}
	msg := strings.Join(parts, "; ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}

// scrub removes the token from an error's text, in case a server or proxy
// echoes the request back.
func (c *Client) scrub(err error) error {
	if err == nil || c.token == "" || !strings.Contains(err.Error(), string(c.token)) {
		return err
	}
	return &scrubbed{msg: strings.ReplaceAll(err.Error(), string(c.token), "[redacted]"), err: err}
}

// scrubbed keeps the original error for errors.As/Is while printing a
// cleaned text.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

var linkRE = regexp.MustCompile(`<([^>]*)>\s*;[^,]*\brel="?([^",]*)"?`)

// nextLink finds rel="next" in RFC 8288 Link headers.
func nextLink(headers []string) string {
	for _, h := range headers {
		for _, m := range linkRE.FindAllStringSubmatch(h, -1) {
			for _, rel := range strings.Fields(m[2]) {
				if rel == "next" {
					return m[1]
				}
			}
		}
	}
	return ""
}

// paginate follows Link rel="next" from first until limit items were kept
// or the pages end. page decodes one page; keep (may be nil) filters items,
// e.g. pull requests out of an issue list.
func paginate[T any](first string, limit int, page func(u string) ([]T, string, error), keep func(T) bool) ([]T, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	var out []T
	seen := map[string]bool{}
	for u, n := first, 0; u != "" && len(out) < limit; n++ {
		if n == maxPages || seen[u] {
			return out, errors.New("GitHub API: pagination does not end; giving up")
		}
		seen[u] = true
		items, next, err := page(u)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if keep == nil || keep(it) {
				out = append(out, it)
				if len(out) == limit {
					break
				}
			}
		}
		u = next
	}
	return out, nil
}

// perPage asks for no more than needed, at most GitHub's maximum of 100.
func perPage(limit int) string {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return strconv.Itoa(min(limit, 100))
}
