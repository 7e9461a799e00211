package gitx

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// userState is everything Backup and Rollback promise not to touch.
type userState struct {
	head, branch, index, stash, stashList string
	ignored                               map[string]string
}

func captureUserState(r *repo, ignored ...string) userState {
	r.tb.Helper()
	idx, err := os.ReadFile(r.path(".git/index"))
	if err != nil {
		r.tb.Fatal(err)
	}
	s := userState{
		head:      r.head(),
		branch:    r.git("symbolic-ref", "-q", "HEAD"),
		index:     fmt.Sprintf("%x", sha256.Sum256(idx)),
		stash:     r.git("rev-parse", "-q", "--verify", "refs/stash"),
		stashList: r.git("stash", "list"),
		ignored:   map[string]string{},
	}
	for _, p := range ignored {
		s.ignored[p] = r.read(p)
	}
	return s
}

// dirtyRepo has a stash entry, a staged change, an unstaged change, a
// deletion, an untracked file, ignored files and ralph state.
func dirtyRepo(t *testing.T) *repo {
	r := newRepoWithFiles(t, map[string]string{
		"a.txt": "a0\n", "b.txt": "b0\n", "gone.txt": "g\n", ".gitignore": "*.log\nbuild/\n",
		".ralph/fix_plan.md": "- [ ] x\n",
	})
	r.write("a.txt", "stashed\n")
	r.git("stash", "-q")
	r.write("a.txt", "a staged\n")
	r.git("add", "a.txt")
	r.write("a.txt", "a worktree\n")
	r.write("b.txt", "b unstaged\n")
	r.remove("gone.txt")
	r.write("new file.txt", "untracked\n")
	r.write("debug.log", "ignored\n")
	r.write("build/out.bin", "ignored too\n")
	r.write(".ralph/status.json", "{}")
	return r
}

func treeFiles(r *repo, rev string) map[string]string {
	r.tb.Helper()
	files := map[string]string{}
	for _, p := range splitZ([]byte(r.git("ls-tree", "-r", "-z", "--name-only", rev))) {
		files[p] = r.git("show", rev+":"+p)
	}
	return files
}

func TestBackupLeavesUserStateAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := dirtyRepo(t)
	state := captureUserState(r, "debug.log", "build/out.bin")
	status := r.git("status", "--porcelain=v2", "-z")

	ref, err := Backup(ctx, r.dir, "iter-1")
	if err != nil {
		t.Fatal(err)
	}
	if ref != "refs/ralph/backups/iter-1" {
		t.Errorf("ref = %q", ref)
	}
	if got := captureUserState(r, "debug.log", "build/out.bin"); !reflect.DeepEqual(got, state) {
		t.Errorf("user state changed:\n%+v\n%+v", got, state)
	}
	if got := r.git("status", "--porcelain=v2", "-z"); got != status {
		t.Errorf("status changed:\n%q\n%q", got, status)
	}

	want := map[string]string{
		"a.txt": "a worktree\n", "b.txt": "b unstaged\n", "new file.txt": "untracked\n",
		".gitignore": "*.log\nbuild/\n", ".ralph/fix_plan.md": "- [ ] x\n",
	}
	if got := treeFiles(r, ref); !reflect.DeepEqual(got, want) {
		t.Errorf("backup tree = %q\nwant %q", got, want)
	}
	if parent := strings.TrimSpace(r.git("rev-parse", ref+"^")); parent != state.head {
		t.Errorf("parent = %s, want HEAD %s", parent, state.head)
	}

	list, err := ListBackups(ctx, r.dir)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListBackups = %+v, %v", list, err)
	}
	if b := list[0]; b.Ref != ref || b.Label != "iter-1" || b.Head != state.head || b.Subject != "ralph backup iter-1" || b.Time.IsZero() {
		t.Errorf("ListBackups[0] = %+v", b)
	}
	if _, err := Backup(ctx, r.dir, "iter-1"); err == nil {
		t.Error("reusing a label: want an error")
	}
	if _, err := Backup(ctx, r.dir, "bad..label"); err == nil {
		t.Error("invalid label: want an error")
	}
	if ref2, err := Backup(ctx, r.dir, ""); err != nil || !strings.HasPrefix(ref2, BackupPrefix+"2") {
		t.Errorf("default label: %q, %v", ref2, err)
	}
	if err := DeleteBackup(ctx, r.dir, "iter-1"); err != nil {
		t.Fatal(err)
	}
	if err := DeleteBackup(ctx, r.dir, "refs/heads/main"); err == nil {
		t.Error("DeleteBackup of a branch: want an error")
	}
	if list, _ := ListBackups(ctx, r.dir); len(list) != 1 {
		t.Errorf("after delete: %+v", list)
	}
}

func TestBackupEmptyRepo(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("a.txt", "a")
	ref, err := Backup(context.Background(), r.dir, "first")
	if err != nil {
		t.Fatal(err)
	}
	if got := treeFiles(r, ref); !reflect.DeepEqual(got, map[string]string{"a.txt": "a"}) {
		t.Errorf("tree = %q", got)
	}
	if out := r.git("rev-list", "--count", ref); strings.TrimSpace(out) != "1" {
		t.Errorf("backup of an empty repo should be a root commit, rev-list says %s", out)
	}
	if _, err := os.Stat(r.path(".git/index")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the user's index was created: %v", err)
	}
}

func TestRollbackRefusesDirtyThenForces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := dirtyRepo(t)
	ref, err := Backup(ctx, r.dir, "before")
	if err != nil {
		t.Fatal(err)
	}
	// The agent's call: edits, deletions, new files, a commit, ignored
	// output and ralph state.
	r.write("b.txt", "agent\n")
	r.remove("new file.txt")
	r.write("agent.txt", "agent\n")
	r.write("pkg/deep/new.go", "package deep\n")
	r.write("committed.txt", "c\n")
	r.git("add", "committed.txt")
	r.git("commit", "-q", "-m", "agent commit")
	r.write("agent.log", "ignored\n")
	r.write(".ralph/status.json", `{"loop":2}`)
	state := captureUserState(r, "debug.log", "build/out.bin", "agent.log")

	_, err = Rollback(ctx, r.dir, "before", false)
	if !errors.Is(err, ErrDirty) {
		t.Fatalf("Rollback without force = %v, want ErrDirty", err)
	}
	if r.read("b.txt") != "agent\n" {
		t.Fatal("a refused rollback changed files")
	}

	res, err := Rollback(ctx, r.dir, ref, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.SafetyRef, BackupPrefix+"pre-rollback-") {
		t.Errorf("SafetyRef = %q", res.SafetyRef)
	}
	if got := treeFiles(r, res.SafetyRef)["agent.txt"]; got != "agent\n" {
		t.Errorf("safety backup lacks the agent's work: %q", got)
	}
	if got := captureUserState(r, "debug.log", "build/out.bin", "agent.log"); !reflect.DeepEqual(got, state) {
		t.Errorf("user state changed:\n%+v\n%+v", got, state)
	}
	for p, want := range map[string]string{
		"a.txt": "a worktree\n", "b.txt": "b unstaged\n", "new file.txt": "untracked\n",
		".ralph/status.json": `{"loop":2}`,
	} {
		if got := r.read(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"agent.txt", "pkg", "committed.txt", "gone.txt"} {
		if r.exists(p) {
			t.Errorf("%s should not exist after rollback", p)
		}
	}
	sort.Strings(res.Removed)
	if want := []string{"agent.txt", "committed.txt", "pkg/deep/new.go"}; !reflect.DeepEqual(res.Removed, want) {
		t.Errorf("Removed = %q, want %q", res.Removed, want)
	}
	if want := []string{"b.txt", "new file.txt"}; !reflect.DeepEqual(res.Restored, want) {
		t.Errorf("Restored = %q, want %q", res.Restored, want)
	}
	// The tree now matches the backup again: a second backup has its tree.
	again, err := Backup(ctx, r.dir, "again")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := r.git("rev-parse", ref+"^{tree}"), r.git("rev-parse", again+"^{tree}"); a != b {
		t.Errorf("tree after rollback %s differs from backup %s", b, a)
	}
}

func TestRollbackCleanTreeKeepsIgnoredFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepoWithFiles(t, map[string]string{"a.txt": "a\n", ".gitignore": "*.log\n"})
	ref, err := Backup(ctx, r.dir, "start")
	if err != nil {
		t.Fatal(err)
	}
	r.write("gen/code.go", "package gen\n")
	r.write("gen/trace.log", "ignored\n")
	r.write("a.txt", "a2\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "agent")
	res, err := Rollback(ctx, r.dir, ref, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.SafetyRef != "" {
		t.Errorf("clean tree needs no safety backup, got %q", res.SafetyRef)
	}
	if r.read("a.txt") != "a\n" || r.exists("gen/code.go") || r.read("gen/trace.log") != "ignored\n" {
		t.Error("rollback did not restore files or removed an ignored one")
	}
}

func TestRollbackRefusesToReplaceDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepoWithFiles(t, map[string]string{"x": "file\n", ".gitignore": "*.log\n", "keep.txt": "k"})
	ref, err := Backup(ctx, r.dir, "with-file")
	if err != nil {
		t.Fatal(err)
	}
	r.git("rm", "-q", "x")
	r.write("x/in.go", "package x\n")
	r.write("x/secret.log", "ignored\n")
	r.write("keep.txt", "changed")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "x becomes a directory")
	if _, err := Rollback(ctx, r.dir, ref, false); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if r.read("x/secret.log") != "ignored\n" || r.read("x/in.go") != "package x\n" || r.read("keep.txt") != "changed" {
		t.Error("a refused rollback changed files")
	}
	// Forced over a dirty tree, the refusal still comes before the safety
	// backup: nothing at all is left behind.
	r.write("dirty.txt", "d")
	if _, err := Rollback(ctx, r.dir, ref, true); err == nil {
		t.Fatal("forced rollback over a directory: want a refusal")
	}
	if list, _ := ListBackups(ctx, r.dir); len(list) != 1 {
		t.Errorf("a refused rollback left backups: %+v", list)
	}
	if _, err := Rollback(ctx, r.dir, "no-such-backup", false); err == nil {
		t.Error("unknown backup: want an error")
	}
}

// A tracked directory replaced by a symlink to somewhere else must not let
// the rollback delete files through the link.
func TestRollbackNeverDeletesThroughSymlink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	outside := t.TempDir()
	if err := os.WriteFile(outside+"/f.go", []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRepoWithFiles(t, map[string]string{"a.txt": "a\n"})
	ref, err := Backup(ctx, r.dir, "start")
	if err != nil {
		t.Fatal(err)
	}
	r.write("lib/f.go", "inside\n")
	r.git("add", "lib/f.go")
	r.git("commit", "-q", "-m", "lib")
	// Replace the directory by a link; the index still lists lib/f.go.
	if err := os.RemoveAll(r.path("lib")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, r.path("lib")); err != nil {
		t.Fatal(err)
	}
	if _, err := Rollback(ctx, r.dir, ref, true); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(outside + "/f.go"); err != nil || string(b) != "outside\n" {
		t.Fatalf("file outside the work tree was touched: %q, %v", b, err)
	}
}
