// Package github is ralph's one GitHub client: a configured go-github
// (google/go-github, pinned major) for the request service, and on top of it
// the small issue reader `ralph import` and `ralph enable` use: get one
// issue, list them by label, milestone, assignee and state, search them, and
// read their comments. The base URL is configurable for GitHub Enterprise
// Server (https://HOST/api/v3). It also parses the ways people name issues
// and repositories (N, #N, owner/repo#N, issue URLs, git remote URLs).
//
// The token is never printed: it lives in the transport, is sent only to the
// configured API host (not to a redirect or a Link elsewhere), and is
// scrubbed from any message the server sends back.
package github

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v75/github"
)

// APIVersion is the REST API version ralph is written against (the one
// go-github asks for).
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

// Client reads issues from one GitHub API server.
type Client struct {
	api   *gh.Client
	base  *url.URL
	token secret
	now   func() time.Time
}

// secret masks itself in any formatting, so a Client printed with %+v in a
// debug line does not leak the token.
type secret string

func (secret) String() string { return "[redacted]" }

// ParseBaseURL checks an API root ("" is api.github.com) and returns it
// without a trailing slash.
func ParseBaseURL(raw string) (*url.URL, error) {
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
	return base, nil
}

// NewAPI returns the go-github client every part of ralph uses: its base URL
// is the API root exactly as given (BaseURL, "" for api.github.com; no
// /api/v3 is added, so a fake's root works), the token goes only to that
// host, answers are bounded in size, and the User-Agent is ralph's. It does
// not retry: callers decide whether a rate limit waits or fails.
func NewAPI(opts Options) (*gh.Client, error) {
	base, err := ParseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	return newAPI(base, opts), nil
}

func newAPI(base *url.URL, opts Options) *gh.Client {
	hc := &http.Client{Timeout: 30 * time.Second}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		hc = &c
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = &transport{scheme: base.Scheme, host: base.Host, token: secret(opts.Token), next: next}
	c := gh.NewClient(hc)
	root := *base
	root.Path = strings.TrimRight(base.Path, "/") + "/"
	root.RawPath = ""
	c.BaseURL = &root
	c.UploadURL = &root
	c.UserAgent = opts.UserAgent
	if c.UserAgent == "" {
		c.UserAgent = "ralph"
	}
	return c
}

// transport adds the token to requests for the API host only (a redirect
// elsewhere goes without it) and bounds every answer's body.
type transport struct {
	scheme, host string
	token        secret
	next         http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.token != "" && req.URL.Scheme == t.scheme && req.URL.Host == t.host {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+string(t.token))
	}
	resp, err := t.next.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = limitedBody{Reader: io.LimitReader(resp.Body, maxBody), Closer: resp.Body}
	}
	return resp, err
}

type limitedBody struct {
	io.Reader
	io.Closer
}

// New checks the options and returns a client.
func New(opts Options) (*Client, error) {
	base, err := ParseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{api: newAPI(base, opts), base: base, token: secret(opts.Token), now: opts.Now}
	if c.now == nil {
		c.now = time.Now
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

// apiError turns what go-github returned into ralph's errors: a
// *RateLimitError for a used-up or secondary limit, an error wrapping
// ErrNotFound for a 404, an *APIError for any other answer, the transport's
// error otherwise; the token scrubbed from all of them.
func (c *Client) apiError(err error) error {
	if err == nil {
		return nil
	}
	anon := c.token == ""
	var rl *gh.RateLimitError
	var ab *gh.AbuseRateLimitError
	var er *gh.ErrorResponse
	switch {
	case errors.As(err, &rl):
		e := &RateLimitError{Limit: rl.Rate.Limit, Resource: rl.Rate.Resource, Anonymous: anon}
		if !rl.Rate.Reset.IsZero() {
			e.Reset = rl.Rate.Reset.UTC()
		}
		return e
	case errors.As(err, &ab):
		e := &RateLimitError{Secondary: true, Anonymous: anon}
		if ab.RetryAfter != nil {
			e.Reset = c.now().Add(*ab.RetryAfter).UTC()
		}
		return e
	case errors.As(err, &er) && er.Response != nil:
		path := ""
		if er.Response.Request != nil {
			path = er.Response.Request.URL.Path
		}
		return c.scrub(c.statusError(er.Response, path, errorMessage(er)))
	}
	return c.scrub(fmt.Errorf("GitHub API: %w", err))
}

// statusError turns an unsuccessful answer into a typed error; go-github
// leaves a 429 (and a 403 without its documentation link) to us.
func (c *Client) statusError(resp *http.Response, path, msg string) error {
	st := resp.StatusCode
	anon := c.token == ""
	if st == http.StatusForbidden || st == http.StatusTooManyRequests {
		h := resp.Header
		if h.Get("X-Ratelimit-Remaining") == "0" {
			e := &RateLimitError{Resource: h.Get("X-Ratelimit-Resource"), Anonymous: anon}
			if sec, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
				e.Reset = time.Unix(sec, 0).UTC()
			}
			e.Limit, _ = strconv.Atoi(h.Get("X-Ratelimit-Limit"))
			return e
		}
		if ra := h.Get("Retry-After"); ra != "" {
			e := &RateLimitError{Secondary: true, Anonymous: anon}
			if sec, err := strconv.Atoi(ra); err == nil {
				e.Reset = c.now().Add(time.Duration(sec) * time.Second).UTC()
			}
			return e
		}
		if st == http.StatusTooManyRequests {
			return &RateLimitError{Anonymous: anon}
		}
	}
	if st == http.StatusNotFound {
		return fmt.Errorf("GitHub API %s: %w", path, ErrNotFound)
	}
	return &APIError{Status: st, Message: msg, Path: path}
}

// errorMessage reads GitHub's {"message": ..., "errors": [...]}.
func errorMessage(er *gh.ErrorResponse) string {
	parts := []string{er.Message}
	for _, d := range er.Errors {
		switch {
		case d.Message != "":
			parts = append(parts, d.Message)
		case d.Code != "":
			parts = append(parts, strings.TrimSpace(d.Field+" "+d.Code))
		}
	}
	msg := strings.Join(parts, "; ")
	if msg == "" {
		return ""
	}
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

// nextPage is the page go-github read from the Link header, 0 at the end.
// A next link to another server is refused: go-github builds the next
// request from the page number on the configured host, but a server that
// points elsewhere is broken or hostile and its pages are not to be trusted.
func (c *Client) nextPage(resp *gh.Response) (int, error) {
	if resp == nil || resp.Response == nil || resp.NextPage == 0 {
		return 0, nil
	}
	if l := nextLink(resp.Header.Values("Link")); l != "" {
		u, err := url.Parse(l)
		if err != nil {
			return 0, fmt.Errorf("GitHub API: bad Link URL: %w", err)
		}
		if u.IsAbs() && (u.Scheme != c.base.Scheme || u.Host != c.base.Host) {
			return 0, fmt.Errorf("GitHub API: refusing to follow a link to another host (%s)", u.Host)
		}
	}
	return resp.NextPage, nil
}

// paginate fetches pages 1, 2, … until limit items were kept or the pages
// end. page fetches one page and returns its items and go-github's
// response; keep (may be nil) filters items, e.g. pull requests out of an
// issue list.
func paginate[T any](c *Client, limit int, page func(n int) ([]T, *gh.Response, error), keep func(T) bool) ([]T, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	var out []T
	seen := map[int]bool{}
	for p, n := 1, 0; p != 0 && len(out) < limit; n++ {
		if n == maxPages || seen[p] {
			return out, errors.New("GitHub API: pagination does not end; giving up")
		}
		seen[p] = true
		items, resp, err := page(p)
		if err != nil {
			return nil, c.apiError(err)
		}
		for _, it := range items {
			if keep == nil || keep(it) {
				out = append(out, it)
				if len(out) == limit {
					break
				}
			}
		}
		if len(out) == limit {
			break
		}
		if p, err = c.nextPage(resp); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// perPage asks for no more than needed, at most GitHub's maximum of 100.
func perPage(limit int) int {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return min(limit, 100)
}
