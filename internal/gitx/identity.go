package gitx

import (
	"context"
	"errors"
	"strings"
)

// ErrNoIdentity is git having no name and email to commit with.
var ErrNoIdentity = errors.New("git has no identity to commit with: set it with `git config --global user.name \"Your Name\"` and `git config --global user.email you@example.com`")

// Identity is the "Name <email>" git would sign a commit in dir with, or
// ErrNoIdentity when a commit would fail for the lack of one. It asks git
// itself (`git var GIT_COMMITTER_IDENT`), so configuration files,
// environment variables and what git derives from the host all count, as
// they do for a real commit.
func Identity(ctx context.Context, dir string) (string, error) {
	out, err := gitCmd{dir: dir, args: []string{"var", "GIT_COMMITTER_IDENT"}, identity: true}.run(ctx)
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) {
			return "", ErrNoIdentity
		}
		return "", err
	}
	// "Name <email> 1700000000 +0000": the time is not part of who.
	id := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(id, '>'); i >= 0 {
		id = id[:i+1]
	}
	return id, nil
}

// UserIdentity is the name and email of the user's global configuration
// ("" when unset), read explicitly: ralph's own git runs without it, and
// a commit ralph makes for the user (a request's) names them here.
func UserIdentity(ctx context.Context) (name, email string) {
	get := func(key string) string {
		out, _ := gitCmd{dir: "/", raw: true, identity: true, args: []string{"config", "--global", "--get", key}}.run(ctx)
		return strings.TrimSpace(string(out))
	}
	return get("user.name"), get("user.email")
}

// AsUser runs git in dir for the user's own setup steps (`ralph setup`,
// `ralph import`'s new directory, the demo's first commit): with the user's
// global configuration and identity, so a new repository gets their
// default branch and a commit their name, but through the same wrapper as
// every other host git, with repository-chosen programs off and the
// daemon's secrets out of its environment.
func AsUser(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gitCmd{dir: dir, args: args, identity: true}.run(ctx)
}
