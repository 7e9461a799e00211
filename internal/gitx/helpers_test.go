package gitx

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain isolates every git process (ours and the helpers') from the
// machine's configuration: no system config, a throw-away HOME for the
// global one, a fixed identity, and a ceiling so that a temp directory never
// resolves to some repository above it. It runs before any test, so nothing
// is flipped while tests run.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "gitx-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
		"GIT_CEILING_DIRECTORIES": os.TempDir(),
	} {
		os.Setenv(k, v)
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL"} {
		os.Unsetenv(k)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// repo is a real git repository in a test's temp directory.
type repo struct {
	tb  testing.TB
	dir string
}

// newRepo makes an empty repository on branch main.
func newRepo(tb testing.TB) *repo {
	tb.Helper()
	r := &repo{tb: tb, dir: tb.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

// newRepoWithFiles makes a repository with one commit of the given files.
func newRepoWithFiles(tb testing.TB, files map[string]string) *repo {
	tb.Helper()
	r := newRepo(tb)
	for p, c := range files {
		r.write(p, c)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "initial")
	return r
}

func (r *repo) git(args ...string) string {
	r.tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (r *repo) path(p string) string { return filepath.Join(r.dir, filepath.FromSlash(p)) }

func (r *repo) write(p, content string) {
	r.tb.Helper()
	if err := os.MkdirAll(filepath.Dir(r.path(p)), 0o755); err != nil {
		r.tb.Fatal(err)
	}
	if err := os.WriteFile(r.path(p), []byte(content), 0o644); err != nil {
		r.tb.Fatal(err)
	}
}

func (r *repo) read(p string) string {
	r.tb.Helper()
	b, err := os.ReadFile(r.path(p))
	if err != nil {
		r.tb.Fatal(err)
	}
	return string(b)
}

func (r *repo) exists(p string) bool {
	_, err := os.Lstat(r.path(p))
	return err == nil
}

func (r *repo) remove(p string) {
	r.tb.Helper()
	if err := os.Remove(r.path(p)); err != nil {
		r.tb.Fatal(err)
	}
}

// touch moves a file's mtime without changing its content.
func (r *repo) touch(p string) {
	r.tb.Helper()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(r.path(p), later, later); err != nil {
		r.tb.Fatal(err)
	}
}

func (r *repo) head() string { return strings.TrimSpace(r.git("rev-parse", "HEAD")) }

func (r *repo) snapshot() Snap {
	r.tb.Helper()
	s, err := Snapshot(context.Background(), r.dir)
	if err != nil {
		r.tb.Fatal(err)
	}
	return s
}

func (r *repo) snapshotAfter(before Snap) Snap {
	r.tb.Helper()
	s, err := SnapshotAfter(context.Background(), r.dir, before)
	if err != nil {
		r.tb.Fatal(err)
	}
	return s
}
