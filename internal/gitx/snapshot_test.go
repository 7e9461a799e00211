package gitx

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// baseFiles is the committed starting point of every step test.
var baseFiles = map[string]string{
	"a.txt":              "alpha\n",
	"b.txt":              "bravo\n",
	"dir/c.txt":          "charlie\n",
	".gitignore":         "*.log\nbuild/\n",
	".ralph/fix_plan.md": "- [ ] task\n",
	"odd name.txt":       "spaces\n",
	"ünï cødé ✓.txt":     "unicode\n",
	"new\nline.txt":      "newline in name\n",
}

// TestCompareSteps is the step table: a repository state before the agent
// call (setup), what the agent does during it (action), and the progress
// Compare must report.
func TestCompareSteps(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(r *repo)
		action    func(r *repo)
		wantFiles []string
		commits   int
		headMoved bool
	}{
		{name: "nothing changed"},
		{
			name:   "nothing changed in a dirty tree",
			setup:  func(r *repo) { r.write("a.txt", "edited\n"); r.write("u.txt", "untracked\n"); r.git("add", "b.txt") },
			action: func(r *repo) {},
		},
		{name: "new untracked file", action: func(r *repo) { r.write("new.txt", "x") }, wantFiles: []string{"new.txt"}},
		{name: "new untracked file in a new directory", action: func(r *repo) { r.write("x/y/z.go", "package z") }, wantFiles: []string{"x/y/z.go"}},
		{name: "tracked file modified", action: func(r *repo) { r.write("a.txt", "changed\n") }, wantFiles: []string{"a.txt"}},
		{
			name:  "already modified before and untouched",
			setup: func(r *repo) { r.write("a.txt", "edited\n") },
		},
		{
			name:   "already modified before, only touched",
			setup:  func(r *repo) { r.write("a.txt", "edited\n") },
			action: func(r *repo) { r.touch("a.txt") },
		},
		{
			name:   "already modified before, rewritten with the same bytes",
			setup:  func(r *repo) { r.write("a.txt", "edited\n") },
			action: func(r *repo) { r.write("a.txt", "edited\n") },
		},
		{
			name:      "modified again differently",
			setup:     func(r *repo) { r.write("a.txt", "edited\n") },
			action:    func(r *repo) { r.write("a.txt", "edited twice\n") },
			wantFiles: []string{"a.txt"},
		},
		{
			name:      "modified again, same size",
			setup:     func(r *repo) { r.write("a.txt", "edited-1\n") },
			action:    func(r *repo) { r.write("a.txt", "edited-2\n") },
			wantFiles: []string{"a.txt"},
		},
		{
			name:      "reverted to HEAD",
			setup:     func(r *repo) { r.write("a.txt", "edited\n") },
			action:    func(r *repo) { r.git("checkout", "--", "a.txt") },
			wantFiles: []string{"a.txt"},
		},
		{
			name:      "staged during the call",
			setup:     func(r *repo) { r.write("a.txt", "edited\n") },
			action:    func(r *repo) { r.git("add", "a.txt") },
			wantFiles: []string{"a.txt"},
		},
		{
			name:      "staged before, unstaged during the call",
			setup:     func(r *repo) { r.write("a.txt", "edited\n"); r.git("add", "a.txt") },
			action:    func(r *repo) { r.git("reset", "-q", "--", "a.txt") },
			wantFiles: []string{"a.txt"},
		},
		{
			name:      "staged before, edited further unstaged",
			setup:     func(r *repo) { r.write("a.txt", "edited\n"); r.git("add", "a.txt") },
			action:    func(r *repo) { r.write("a.txt", "edited more\n") },
			wantFiles: []string{"a.txt"},
		},
		{
			name:   "staged before and unchanged",
			setup:  func(r *repo) { r.write("a.txt", "edited\n"); r.git("add", "a.txt") },
			action: func(r *repo) {},
		},
		{
			name:      "commit during the call leaves a clean tree",
			setup:     func(r *repo) { r.write("a.txt", "edited\n") },
			action:    func(r *repo) { r.git("commit", "-q", "-am", "agent") },
			wantFiles: []string{"a.txt"}, commits: 1, headMoved: true,
		},
		{
			name: "commits of files that were clean before",
			action: func(r *repo) {
				r.write("n.txt", "new")
				r.git("add", "n.txt")
				r.git("commit", "-q", "-m", "one")
				r.write("b.txt", "bravo 2\n")
				r.git("commit", "-q", "-am", "two")
			},
			wantFiles: []string{"b.txt", "n.txt"}, commits: 2, headMoved: true,
		},
		{
			name:      "amend with only a new message",
			action:    func(r *repo) { r.git("commit", "-q", "--amend", "-m", "reworded") },
			commits:   1,
			headMoved: true,
		},
		{
			name:      "amend with content",
			setup:     func(r *repo) { r.write("b.txt", "bravo 2\n") },
			action:    func(r *repo) { r.git("commit", "-q", "--amend", "-am", "amended") },
			wantFiles: []string{"b.txt"}, commits: 1, headMoved: true,
		},
		{
			name:      "reset to the parent",
			setup:     func(r *repo) { r.write("b.txt", "bravo 2\n"); r.git("commit", "-q", "-am", "second") },
			action:    func(r *repo) { r.git("reset", "-q", "--hard", "HEAD~1") },
			wantFiles: []string{"b.txt"}, headMoved: true,
		},
		{name: "deleted file", action: func(r *repo) { r.remove("b.txt") }, wantFiles: []string{"b.txt"}},
		{
			name:      "deleted untracked file",
			setup:     func(r *repo) { r.write("u.txt", "scratch") },
			action:    func(r *repo) { r.remove("u.txt") },
			wantFiles: []string{"u.txt"},
		},
		{
			name:      "untracked file edited again",
			setup:     func(r *repo) { r.write("u.txt", "scratch") },
			action:    func(r *repo) { r.write("u.txt", "scratch 2") },
			wantFiles: []string{"u.txt"},
		},
		{
			name:      "renamed with git mv",
			action:    func(r *repo) { r.git("mv", "b.txt", "dir/b2.txt") },
			wantFiles: []string{"b.txt", "dir/b2.txt"},
		},
		{
			name: "mode change only",
			action: func(r *repo) {
				if err := os.Chmod(r.path("a.txt"), 0o755); err != nil {
					r.tb.Fatal(err)
				}
			},
			wantFiles: []string{"a.txt"},
		},
		{
			name: "new symlink",
			action: func(r *repo) {
				if err := os.Symlink("a.txt", r.path("link")); err != nil {
					r.tb.Fatal(err)
				}
			},
			wantFiles: []string{"link"},
		},
		{
			name: "only ralph's own state",
			action: func(r *repo) {
				r.write(".ralph/status.json", "{}")
				r.write(".ralph/logs/ralph.log", "log")
				r.write(".ralph/fix_plan.md", "- [x] task\n")
				r.write(".ralphrc", "MAX_CALLS_PER_HOUR=10\n")
			},
		},
		{
			name:   "only ignored files",
			action: func(r *repo) { r.write("debug.log", "x"); r.write("build/out.bin", "y") },
		},
		{name: "new branch at the same commit", action: func(r *repo) { r.git("checkout", "-q", "-b", "feature") }},
		{
			name: "odd file names",
			action: func(r *repo) {
				r.write("odd name.txt", "edited")
				r.write("ünï cødé ✓.txt", "edited")
				r.write("new\nline.txt", "edited")
				r.write("tab\tand \"quotes\" and \\.txt", "new")
				r.write("-leading-dash.txt", "new")
				r.write("名前/ファイル.md", "new")
			},
			wantFiles: []string{"-leading-dash.txt", "new\nline.txt", "odd name.txt",
				"tab\tand \"quotes\" and \\.txt", "ünï cødé ✓.txt", "名前/ファイル.md"},
		},
		{
			name:      "odd file name deleted",
			action:    func(r *repo) { r.remove("new\nline.txt") },
			wantFiles: []string{"new\nline.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRepoWithFiles(t, baseFiles)
			if tt.setup != nil {
				tt.setup(r)
			}
			before := r.snapshot()
			if tt.action != nil {
				tt.action(r)
			}
			got := Compare(before, r.snapshotAfter(before))
			want := Progress{
				Changed:      len(tt.wantFiles) > 0 || tt.commits > 0 || tt.headMoved,
				FilesChanged: tt.wantFiles,
				HeadMoved:    tt.headMoved || tt.commits > 0,
			}
			if (got.Head != "") != want.HeadMoved {
				t.Errorf("head %q with HeadMoved %v", got.Head, want.HeadMoved)
			}
			got.Head, got.LinesAdded, got.LinesRemoved = "", 0, 0 // TestLinesChanged counts them
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Compare =\n  %#v\nwant\n  %#v", got, want)
			}
		})
	}
}

func TestSnapshotEmptyRepo(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	before := r.snapshot()
	if !before.InRepo || before.Head != "" || before.Branch != "main" || len(before.Paths) != 0 {
		t.Fatalf("empty repo snapshot = %+v", before)
	}
	if p := Compare(before, r.snapshotAfter(before)); p.Changed {
		t.Errorf("nothing done, got %+v", p)
	}

	r.write("main.go", "package main\n")
	mid := r.snapshotAfter(before)
	if p := Compare(before, mid); !p.Changed || !reflect.DeepEqual(p.FilesChanged, []string{"main.go"}) || p.HeadMoved || p.LinesAdded != 1 {
		t.Errorf("untracked file in empty repo: %+v", p)
	}

	r.git("add", "main.go")
	r.git("commit", "-q", "-m", "first")
	after := r.snapshotAfter(mid)
	p := Compare(mid, after)
	want := Progress{Changed: true, FilesChanged: []string{"main.go"}, HeadMoved: true, Head: after.Head, LinesAdded: 1}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("first commit: %+v, want %+v", p, want)
	}
}

func TestSnapshotOutsideRepo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Snapshot(ctx, dir)
	if err != nil || s.InRepo {
		t.Fatalf("Snapshot outside repo = %+v, %v", s, err)
	}
	after, err := SnapshotAfter(ctx, dir, s)
	if err != nil || after.InRepo {
		t.Fatalf("SnapshotAfter outside repo = %+v, %v", after, err)
	}
	if p := Compare(s, after); p.Changed {
		t.Errorf("outside repo: %+v", p)
	}
	if ok, err := IsRepo(ctx, dir); ok || err != nil {
		t.Errorf("IsRepo = %v, %v", ok, err)
	}
	if _, err := Root(ctx, dir); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Root err = %v, want ErrNotRepo", err)
	}
	if _, err := CommitsSince(ctx, dir, ""); !errors.Is(err, ErrNotRepo) {
		t.Errorf("CommitsSince err = %v, want ErrNotRepo", err)
	}
	if _, err := Snapshot(ctx, dir+"/missing"); err == nil {
		t.Error("Snapshot of a missing directory: want an error")
	}
}

func TestGitInitDuringCall(t *testing.T) {
	t.Parallel()
	r := &repo{tb: t, dir: t.TempDir()}
	before := r.snapshot()
	r.git("init", "-q", "-b", "main")
	r.write("a", "a")
	r.git("add", "a")
	r.git("commit", "-q", "-m", "a")
	after := r.snapshotAfter(before)
	p := Compare(before, after)
	want := Progress{Changed: true, FilesChanged: []string{"a"}, HeadMoved: true, Head: after.Head, LinesAdded: 1}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got %+v, want %+v", p, want)
	}
}

// A project in a subdirectory of a larger repository keeps its .ralph/
// there; that one must be excluded too, and paths stay root-relative.
func TestSnapshotFromSubdirectory(t *testing.T) {
	t.Parallel()
	r := newRepoWithFiles(t, map[string]string{"proj/main.go": "package main\n", "other.txt": "o"})
	sub := &repo{tb: t, dir: r.path("proj")}
	before := sub.snapshot()
	if before.Root != r.dir {
		t.Errorf("Root = %q, want %q", before.Root, r.dir)
	}
	r.write("proj/.ralph/status.json", "{}")
	r.write("proj/.ralphrc", "X=1\n")
	r.write("other.txt", "changed")
	p := Compare(before, sub.snapshotAfter(before))
	if !reflect.DeepEqual(p.FilesChanged, []string{"other.txt"}) {
		t.Errorf("FilesChanged = %q", p.FilesChanged)
	}
}

func TestBigFileFingerprint(t *testing.T) {
	t.Parallel()
	r := newRepoWithFiles(t, map[string]string{"a": "a"})
	big := strings.Repeat("x", hashCap+100)
	r.write("big.bin", big)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(r.path("big.bin"), old, old); err != nil {
		t.Fatal(err)
	}
	before := r.snapshot()
	// Same size, change past the hashed prefix: only the mtime tells.
	r.write("big.bin", big[:len(big)-1]+"y")
	if p := Compare(before, r.snapshot()); !reflect.DeepEqual(p.FilesChanged, []string{"big.bin"}) {
		t.Errorf("edit past the cap: %+v", p)
	}
}

func TestSnapshotCancelled(t *testing.T) {
	t.Parallel()
	r := newRepoWithFiles(t, map[string]string{"a": "a"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Snapshot(ctx, r.dir); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestCommitsSince(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	if n, err := CommitsSince(ctx, r.dir, ""); n != 0 || err != nil {
		t.Errorf("empty repo: %d, %v", n, err)
	}
	r.write("a", "1")
	r.git("add", "a")
	r.git("commit", "-q", "-m", "1")
	start := r.head()
	for i := range 3 {
		r.write("a", string(rune('2'+i)))
		r.git("commit", "-q", "-am", "more")
	}
	if n, err := CommitsSince(ctx, r.dir, start); n != 3 || err != nil {
		t.Errorf("since start: %d, %v", n, err)
	}
	if n, err := CommitsSince(ctx, r.dir, ""); n != 4 || err != nil {
		t.Errorf("all: %d, %v", n, err)
	}
	if _, err := CommitsSince(ctx, r.dir, "--all"); err == nil {
		t.Error("an option as base: want an error")
	}
}

func TestRepoHelpers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepoWithFiles(t, map[string]string{"sub/a": "a"})
	if ok, err := IsRepo(ctx, r.path("sub")); !ok || err != nil {
		t.Errorf("IsRepo = %v, %v", ok, err)
	}
	if ok, err := IsRepo(ctx, r.path(".git")); ok || err != nil {
		t.Errorf("IsRepo(.git) = %v, %v", ok, err)
	}
	if root, err := Root(ctx, r.path("sub")); root != r.dir || err != nil {
		t.Errorf("Root = %q, %v", root, err)
	}
	if b, err := CurrentBranch(ctx, r.dir); b != "main" || err != nil {
		t.Errorf("CurrentBranch = %q, %v", b, err)
	}
	if clean, err := IsClean(ctx, r.dir); !clean || err != nil {
		t.Errorf("IsClean = %v, %v", clean, err)
	}
	r.write(".ralph/status.json", "{}")
	r.write("x.log", "ignored? no .gitignore here, so untracked")
	if clean, err := IsClean(ctx, r.dir); clean || err != nil {
		t.Errorf("IsClean with an untracked file = %v, %v", clean, err)
	}
	r.remove("x.log")
	if clean, err := IsClean(ctx, r.dir); !clean || err != nil {
		t.Errorf("IsClean with only .ralph/ = %v, %v", clean, err)
	}
	r.git("checkout", "-q", "--detach")
	if b, err := CurrentBranch(ctx, r.dir); b != "" || err != nil {
		t.Errorf("CurrentBranch detached = %q, %v", b, err)
	}
	if _, err := CurrentBranch(ctx, t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Errorf("CurrentBranch outside: %v", err)
	}
}

// A call's receipt counts the lines it changed, committed or not, in one
// git process beside the status; a file dirty before and left as it was
// counts nothing, even when the call committed something else.
func TestLinesChanged(t *testing.T) {
	t.Parallel()
	r := newRepoWithFiles(t, map[string]string{"a.txt": "1\n2\n3\n", "b.txt": "x\n"})
	r.write("dirty.txt", "left alone\n") // untracked before the call
	before := r.snapshot()
	r.write("a.txt", "1\ntwo\n3\n4\n") // +2 -1
	r.write("new.txt", "n1\nn2\nn3")   // +3 (untracked, no final newline)
	r.write("c.bin", "\x00\x01binary") // binary: counts nothing
	r.remove("b.txt")                  // -1
	p := Compare(before, r.snapshotAfter(before))
	if p.LinesAdded != 5 || p.LinesRemoved != 2 || p.HeadMoved {
		t.Fatalf("uncommitted: %+v", p)
	}

	before = r.snapshot()
	r.git("add", "a.txt", "new.txt")
	r.git("commit", "-q", "-m", "work")
	after := r.snapshotAfter(before)
	p = Compare(before, after)
	if !p.HeadMoved || p.Head != after.Head || !reflect.DeepEqual(p.FilesChanged, []string{"a.txt", "new.txt"}) {
		t.Fatalf("committed: %+v", p)
	}
	if p.LinesAdded != 5 || p.LinesRemoved != 1 {
		t.Errorf("committed lines: +%d -%d, want +5 -1", p.LinesAdded, p.LinesRemoved)
	}
}
