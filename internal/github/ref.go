package github

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"ralph/internal/gitx"
)

// DefaultHost is github.com; every other host is a GitHub Enterprise server.
const DefaultHost = "github.com"

// Repo names a repository. Host is where its web pages live ("github.com" or
// an enterprise host, maybe with a port); "" means not known, which callers
// read as github.com.
type Repo struct {
	Host, Owner, Name string
}

// String is "owner/name", the form GitHub prints.
func (r Repo) String() string { return r.Owner + "/" + r.Name }

// IsZero reports whether no repository is named.
func (r Repo) IsZero() bool { return r.Owner == "" && r.Name == "" }

// IssueRef is an issue as the user wrote it. Repo is zero for "N" and "#N":
// the caller fills in the default repository.
type IssueRef struct {
	Repo   Repo
	Number int
}

// String is "owner/repo#N", or "#N" without a repository.
func (r IssueRef) String() string {
	if r.Repo.IsZero() {
		return "#" + strconv.Itoa(r.Number)
	}
	return r.Repo.String() + "#" + strconv.Itoa(r.Number)
}

// Owners are letters, digits and single hyphens; repository names also allow
// dots and underscores. Checking them keeps a typo from becoming an API path
// such as /repos/../x.
var (
	ownerRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	shortRE = regexp.MustCompile(`^([^/#\s]+)/([^/#\s]+)#(\d+)$`)
)

// ParseRepo reads "owner/name".
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Repo{}, fmt.Errorf("repository %q: want owner/name", s)
	}
	return checkRepo(Repo{Owner: owner, Name: strings.TrimSuffix(name, ".git")}, s)
}

func checkRepo(r Repo, orig string) (Repo, error) {
	if !ownerRE.MatchString(r.Owner) || !nameRE.MatchString(r.Name) || r.Name == "." || r.Name == ".." {
		return Repo{}, fmt.Errorf("repository %q: want owner/name (letters, digits, '-', '.', '_')", orig)
	}
	return r, nil
}

// ParseIssueRef reads an issue reference: "N", "#N", "owner/repo#N", or an
// issue URL "https://HOST/owner/repo/issues/N" (github.com or an enterprise
// host; a query or #fragment, such as a link to a comment, is ignored).
func ParseIssueRef(s string) (IssueRef, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (IssueRef, error) {
		return IssueRef{}, fmt.Errorf("issue %q: %s (want N, #N, owner/repo#N or an issue URL)", s, why)
	}
	if s == "" {
		return bad("empty")
	}
	if n, ok := issueNumber(strings.TrimPrefix(s, "#")); ok {
		return IssueRef{Number: n}, nil
	}
	if m := shortRE.FindStringSubmatch(s); m != nil {
		repo, err := checkRepo(Repo{Owner: m[1], Name: m[2]}, m[1]+"/"+m[2])
		if err != nil {
			return bad(err.Error())
		}
		n, ok := issueNumber(m[3])
		if !ok {
			return bad("not an issue number")
		}
		return IssueRef{Repo: repo, Number: n}, nil
	}
	if d := strings.TrimPrefix(s, "#"); d != "" && strings.TrimLeft(d, "0123456789") == "" {
		return bad("not an issue number")
	}
	raw := s
	if !strings.Contains(raw, "://") {
		if !strings.Contains(raw, "/issues/") && !strings.Contains(raw, "/pull/") {
			return bad("not a reference")
		}
		raw = "https://" + raw // "github.com/o/r/issues/1" as pasted without a scheme
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return bad("not a reference")
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 4 || (parts[2] != "issues" && parts[2] != "pull") {
		return bad("not an issue URL")
	}
	if parts[2] == "pull" {
		return bad("a pull request, not an issue")
	}
	repo, err := checkRepo(Repo{Host: webHost(u.Host), Owner: parts[0], Name: parts[1]}, parts[0]+"/"+parts[1])
	if err != nil {
		return bad(err.Error())
	}
	n, ok := issueNumber(parts[3])
	if !ok {
		return bad("not an issue number")
	}
	return IssueRef{Repo: repo, Number: n}, nil
}

func issueNumber(s string) (int, bool) {
	if s == "" || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// webHost folds the forms of github.com into one, lower case.
func webHost(h string) string {
	h = strings.ToLower(h)
	if h == "www.github.com" {
		return DefaultHost
	}
	return h
}

// scpRE is git's scp-like syntax: [user@]host:owner/repo(.git).
var scpRE = regexp.MustCompile(`^(?:[^@/\s]+@)?([^:/\s]+):([^\s]+)$`)

// ParseRemoteURL reads the repository out of a git remote URL: https and
// http (credentials in the URL are dropped), ssh://, git://, git+ssh:// and
// the scp-like git@host:owner/repo.git. The web host keeps an https port
// but drops an ssh one, which says nothing about where the web server is.
// The error never repeats the URL, which may hold a token.
func ParseRemoteURL(remote string) (Repo, error) {
	remote = strings.TrimSpace(remote)
	var host, path string
	switch {
	case strings.Contains(remote, "://"):
		u, err := url.Parse(remote)
		if err != nil || u.Host == "" {
			return Repo{}, errors.New("git remote: not a URL")
		}
		host, path = u.Host, u.Path
		switch u.Scheme {
		case "https", "http":
		case "ssh", "git", "git+ssh", "ssh+git":
			host = u.Hostname()
		default:
			return Repo{}, fmt.Errorf("git remote: unsupported scheme %q", u.Scheme)
		}
	default:
		m := scpRE.FindStringSubmatch(remote)
		if m == nil {
			return Repo{}, errors.New("git remote: not a URL or host:owner/repo")
		}
		host, path = m[1], m[2]
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != 2 {
		return Repo{}, fmt.Errorf("git remote: the path has %d parts, want owner/repo", len(parts))
	}
	repo, err := checkRepo(Repo{Host: webHost(host), Owner: parts[0], Name: strings.TrimSuffix(parts[1], ".git")}, parts[0]+"/"+parts[1])
	if err != nil {
		return Repo{}, fmt.Errorf("git remote: %w", err)
	}
	return repo, nil
}

// APIBase is the REST API root of a web host: api.github.com for
// github.com (and ""), https://HOST/api/v3 for GitHub Enterprise Server.
func APIBase(host string) string {
	if host == "" || webHost(host) == DefaultHost {
		return "https://api.github.com"
	}
	return "https://" + host + "/api/v3"
}

// DefaultRepo is the repository of dir's "origin" remote, from
// `git remote get-url origin`.
func DefaultRepo(ctx context.Context, dir string) (Repo, error) {
	out, err := gitx.Run(ctx, dir, nil, false, "remote", "get-url", "origin")
	if err != nil {
		why := err.Error()
		var ge *gitx.GitError
		if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) != "" {
			why = strings.TrimSpace(ge.Stderr)
		}
		return Repo{}, fmt.Errorf("no default repository (`git remote get-url origin`: %s); name one with owner/repo#N or --github-repo", why)
	}
	repo, err := ParseRemoteURL(string(out))
	if err != nil {
		return Repo{}, fmt.Errorf("no default repository: origin: %w; name one with owner/repo#N or --github-repo", err)
	}
	return repo, nil
}
