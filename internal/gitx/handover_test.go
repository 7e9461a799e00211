package gitx

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A working tree published on one machine and received on another is the
// same tree: HEAD, branch, modified and new files, nothing staged; the
// publisher's own state is untouched, and what is ignored stays home.
func TestHandoverCarriesTheWorkingTree(t *testing.T) {
	ctx := context.Background()
	bare := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a := newRepoWithFiles(t, map[string]string{"main.go": "package main\n", ".gitignore": "secret.env\n"})
	a.git("remote", "add", "origin", bare)
	a.write("main.go", "package main // stashed\n")
	a.git("stash", "-q")
	a.write("main.go", "package main // edited\n")
	a.write("new/util.go", "package util\n")
	a.write("secret.env", "TOKEN=x\n")
	a.write("staged.txt", "staged\n")
	a.git("add", "staged.txt")
	before := captureUserState(a, "secret.env")

	u, err := RemoteURL(ctx, a.dir, "origin")
	if err != nil || u != bare {
		t.Fatalf("RemoteURL = %q, %v; want %q", u, err, bare)
	}
	ref := HandoverPrefix + "api"
	commit, err := Publish(ctx, a.dir, u, ref)
	if err != nil {
		t.Fatal(err)
	}
	if after := captureUserState(a, "secret.env"); !reflect.DeepEqual(before, after) {
		t.Fatalf("Publish touched the tree's state:\nbefore %+v\nafter  %+v", before, after)
	}

	b := &repo{tb: t, dir: filepath.Join(t.TempDir(), "api")}
	if err := Receive(ctx, b.dir, "origin", u, ref, commit); err != nil {
		t.Fatal(err)
	}
	if b.head() != a.head() || strings.TrimSpace(b.git("symbolic-ref", "--short", "HEAD")) != "main" {
		t.Fatalf("received HEAD %s on %q, want %s on main", b.head(), b.git("symbolic-ref", "--short", "HEAD"), a.head())
	}
	for _, p := range []string{"main.go", "new/util.go", "staged.txt"} {
		if got, want := b.read(p), a.read(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if b.exists("secret.env") {
		t.Error("an ignored file travelled")
	}
	if got := b.git("status", "--porcelain"); got != " M main.go\n?? new/\n?? staged.txt\n" {
		t.Errorf("received status:\n%s", got)
	}

	if got, err := RemoteURL(ctx, b.dir, "origin"); err != nil || got != u {
		t.Errorf("the received tree's origin: %q, %v; want %q", got, err, u)
	}

	// The next handover, from the receiver, replaces what a receiver held:
	// a file deleted there is gone, leftovers are cleaned.
	b.remove("new/util.go")
	b.write("two.go", "package main\n")
	c2, err := Publish(ctx, b.dir, u, ref)
	if err != nil {
		t.Fatal(err)
	}
	c := &repo{tb: t, dir: t.TempDir()}
	c.git("init", "-q")
	c.write("junk.txt", "left over\n")
	for _, d := range []string{b.dir, c.dir} {
		if err := Receive(ctx, d, "origin", u, ref, c2); err != nil {
			t.Fatal(err)
		}
	}
	if c.exists("junk.txt") || c.exists("new/util.go") || c.read("two.go") != "package main\n" {
		t.Errorf("second handover: junk %v, deleted file %v", c.exists("junk.txt"), c.exists("new/util.go"))
	}
	if err := Receive(ctx, c.dir, "origin", u, ref, commit); err == nil {
		t.Error("Receive of a commit the ref no longer has: no error")
	}
}

func TestRemoteURLRefusesSecrets(t *testing.T) {
	ctx := context.Background()
	r := newRepoWithFiles(t, map[string]string{"a": "a\n"})
	r.git("remote", "add", "origin", "https://x-access-token:ghp_secret@github.invalid/o/r.git")
	r.git("remote", "add", "ssh", "git@github.invalid:o/r.git")
	if _, err := RemoteURL(ctx, r.dir, "origin"); !errors.Is(err, ErrSecretURL) {
		t.Errorf("a URL with a token: %v, want ErrSecretURL", err)
	}
	if u, err := RemoteURL(ctx, r.dir, "ssh"); err != nil || u != "git@github.invalid:o/r.git" {
		t.Errorf("ssh remote: %q, %v", u, err)
	}
	if _, err := RemoteURL(ctx, r.dir, "nosuch"); err == nil {
		t.Error("a missing remote: no error")
	}
}
