package gitx

import (
	"context"
	"errors"
	"os"
	"testing"
)

func TestIdentity(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	// Without configuration git may still derive one from the host; with
	// useConfigOnly it must not, which is the state a fresh machine can be in.
	os.WriteFile(home+"/.gitconfig", []byte("[user]\n\tuseConfigOnly = true\n"), 0o644)
	if _, err := Identity(context.Background(), dir); !errors.Is(err, ErrNoIdentity) {
		t.Fatalf("no identity: err %v", err)
	}
	t.Setenv("GIT_COMMITTER_NAME", "Ada")
	t.Setenv("GIT_COMMITTER_EMAIL", "ada@example.com")
	id, err := Identity(context.Background(), dir)
	if err != nil || id != "Ada <ada@example.com>" {
		t.Fatalf("identity %q, %v", id, err)
	}
}
