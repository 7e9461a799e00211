package gitx

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gitAnswer is git's own status of r, as the snapshot reads it.
func gitAnswer(t *testing.T, loc location) status {
	t.Helper()
	st, err := gitStatus(context.Background(), loc, false)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func sameStatus(a, b status) bool {
	sorted := func(s status) []statusEntry {
		e := slices.Clone(s.entries)
		slices.SortFunc(e, func(x, y statusEntry) int { return strings.Compare(x.path+"\x00"+x.meta, y.path+"\x00"+y.meta) })
		return e
	}
	return a.head == b.head && a.branch == b.branch && reflect.DeepEqual(sorted(a), sorted(b))
}

// TestQuickStatusAgreesWithGit plays random edits on a repository and
// checks, after each, that whenever the previous snapshot's quick state
// answers, its answer is git's; and that it does answer while only tracked
// files already known to be edited change.
func TestQuickStatusAgreesWithGit(t *testing.T) {
	ops := []struct {
		name string
		do   func(r *repo, rnd *rand.Rand)
	}{
		{"edit", func(r *repo, rnd *rand.Rand) {
			r.write(pick(rnd, "a.txt", "src/b.go", "src/deep/c.md"), fmt.Sprint(rnd.IntN(3)))
		}},
		{"edit same size", func(r *repo, rnd *rand.Rand) { r.write("a.txt", pick(rnd, "xxxx", "yyyy", "a\n")) }},
		{"revert", func(r *repo, rnd *rand.Rand) { r.write("a.txt", "a\n") }},
		{"chmod", func(r *repo, rnd *rand.Rand) {
			os.Chmod(r.path("src/b.go"), os.FileMode(pickInt(rnd, 0o644, 0o755)))
		}},
		{"touch", func(r *repo, rnd *rand.Rand) {
			if r.exists("src/deep/c.md") {
				r.touch("src/deep/c.md")
			}
		}},
		{"untracked", func(r *repo, rnd *rand.Rand) { r.write(pick(rnd, "new.txt", "src/new/n.txt", "n2.txt"), "n") }},
		{"remove untracked", func(r *repo, rnd *rand.Rand) {
			for _, p := range []string{"new.txt", "src/new/n.txt", "n2.txt"} {
				if r.exists(p) {
					r.remove(p)
					return
				}
			}
		}},
		{"remove tracked", func(r *repo, rnd *rand.Rand) {
			if r.exists("src/deep/c.md") {
				r.remove("src/deep/c.md")
			}
		}},
		{"restore tracked", func(r *repo, rnd *rand.Rand) { r.write("src/deep/c.md", "c\n") }},
		{"ignored", func(r *repo, rnd *rand.Rand) { r.write(pick(rnd, "x.log", "build/out.bin", "src/y.log"), "i") }},
		{"ignore rule", func(r *repo, rnd *rand.Rand) {
			r.write(".gitignore", pick(rnd, "*.log\nbuild/\n", "*.log\nbuild/\nn2.txt\n"))
		}},
		{"stage", func(r *repo, rnd *rand.Rand) { r.git("add", "-A") }},
		{"commit", func(r *repo, rnd *rand.Rand) { r.git("add", "-A"); r.git("commit", "-q", "--allow-empty", "-m", "c") }},
		{"ralph state", func(r *repo, rnd *rand.Rand) { r.write(".ralph/logs/x", fmt.Sprint(rnd.Int())) }},
		{"empty dir", func(r *repo, rnd *rand.Rand) { os.MkdirAll(r.path("src/empty"), 0o755) }},
		{"link", func(r *repo, rnd *rand.Rand) {
			os.Remove(r.path("link"))
			os.Symlink(pick(rnd, "a.txt", "src"), r.path("link"))
		}},
	}
	quick := 0
	for seed := range 12 {
		rnd := rand.New(rand.NewPCG(uint64(seed), 7))
		r := newRepoWithFiles(t, map[string]string{"a.txt": "a\n", "src/b.go": "b\n", "src/deep/c.md": "c\n", ".gitignore": "*.log\nbuild/\n", ".ralph/PROMPT.md": "p"})
		prev := r.snapshot()
		var trail []string
		for range 40 {
			op := ops[rnd.IntN(len(ops))]
			if rnd.IntN(3) > 0 {
				op = ops[rnd.IntN(2)] // mostly edits, as a loop's calls
			}
			op.do(r, rnd)
			trail = append(trail, op.name)
			want := gitAnswer(t, prev.loc)
			if got, _, ok := prev.quick.status(prev.loc, nil); ok {
				quick++
				if !sameStatus(got, want) {
					t.Fatalf("seed %d after %v:\nquick %+v\ngit   %+v", seed, trail, got, want)
				}
			}
			prev = r.snapshotAfter(prev)
			if fresh := r.snapshot(); !reflect.DeepEqual(prev.Paths, fresh.Paths) || prev.Head != fresh.Head {
				t.Fatalf("seed %d after %v: snapshot %v, git's %v", seed, trail, prev.Paths, fresh.Paths)
			}
		}
	}
	if quick < 100 {
		t.Fatalf("the quick status answered %d times in 480 steps, mostly repeated edits", quick)
	}
}

func pick(rnd *rand.Rand, s ...string) string { return s[rnd.IntN(len(s))] }
func pickInt(rnd *rand.Rand, s ...int) int    { return s[rnd.IntN(len(s))] }

// TestQuickStatusAsksGit lists what the quick status leaves to git: each
// change, made after a snapshot that could answer quickly, must make the
// next one ask.
func TestQuickStatusAsksGit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *repo)
	}{
		{"new untracked file", func(r *repo) { r.write("n.txt", "n") }},
		{"new file in a subdirectory", func(r *repo) { r.write("src/n.txt", "n") }},
		{"removed file", func(r *repo) { r.remove("src/b.go") }},
		{"ignore rule", func(r *repo) { r.write(".gitignore", "*.tmp\n") }},
		{"exclude file", func(r *repo) { r.write(".git/info/exclude", "*.tmp\n") }},
		{"global ignore", func(r *repo) {
			p := filepath.Join(os.Getenv("HOME"), ".config", "git", "ignore")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("*.tmp\n"), 0o644); err != nil {
				r.tb.Fatal(err)
			}
		}},
		{"staged", func(r *repo) { r.write("a.txt", "z"); r.git("add", "a.txt") }},
		{"commit", func(r *repo) { r.git("commit", "-q", "--allow-empty", "-m", "e") }},
		{"branch", func(r *repo) { r.git("checkout", "-q", "-b", "other") }},
		{"configuration", func(r *repo) { r.git("config", "core.autocrlf", "true") }},
		{"directory for a file", func(r *repo) { r.remove("a.txt"); os.Mkdir(r.path("a.txt"), 0o755) }},
		{"link for a file", func(r *repo) { r.remove("a.txt"); os.Symlink("src", r.path("a.txt")) }},
		{"clean file edited", func(r *repo) { r.write("src/b.go", "changed") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			r := newRepoWithFiles(t, map[string]string{"a.txt": "a\n", "src/b.go": "b\n", ".gitignore": "*.log\n"})
			r.write("a.txt", "edited")
			s := r.snapshot()
			if _, _, ok := s.quick.status(s.loc, nil); !ok {
				t.Fatal("nothing changed, yet the quick status did not answer")
			}
			tc.change(r)
			got, _, ok := s.quick.status(s.loc, nil)
			if ok && !sameStatus(got, gitAnswer(t, s.loc)) {
				t.Fatalf("answered wrongly: %+v", got)
			}
			if ok && tc.name != "clean file edited" {
				t.Fatal("answered where git must be asked")
			}
		})
	}
}

// TestQuickStatusNotUsed: repositories whose answer the quick status does
// not model never get one.
func TestQuickStatusNotUsed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(r *repo)
	}{
		{"attributes", func(r *repo) { r.write(".gitattributes", "* text=auto\n") }},
		{"attributes below", func(r *repo) { r.write("src/.gitattributes", "*.go diff\n") }},
		{"skip-worktree", func(r *repo) { r.git("update-index", "--skip-worktree", "a.txt") }},
		{"assume-unchanged", func(r *repo) { r.git("update-index", "--assume-unchanged", "a.txt") }},
		{"intent to add", func(r *repo) { r.write("n.txt", "n"); r.git("add", "-N", "n.txt") }},
		{"ignore case", func(r *repo) { r.git("config", "core.ignorecase", "true") }},
		{"nested repository", func(r *repo) { r.git("init", "-q", "inner") }},
		{"split index", func(r *repo) { r.git("update-index", "--split-index") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepoWithFiles(t, map[string]string{"a.txt": "a\n", "src/b.go": "b\n"})
			tc.setup(r)
			s := r.snapshot()
			if _, _, ok := s.quick.status(s.loc, nil); ok {
				t.Fatal("the quick status answered")
			}
		})
	}
}

// TestParseIndexAsGitListsIt reads indexes of each version git writes and
// checks the entries against `git ls-files --stage`.
func TestParseIndexAsGitListsIt(t *testing.T) {
	for _, version := range []string{"2", "3", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			files := map[string]string{"a.txt": "a\n", "src/b.go": "b\n", "src/" + strings.Repeat("x", 200) + "/" + strings.Repeat("y", 200) + ".txt": "long\n", "run.sh": "#!/bin/sh\n"}
			r := newRepoWithFiles(t, files)
			os.Chmod(r.path("run.sh"), 0o755)
			os.Symlink("a.txt", r.path("l"))
			r.git("add", "-A")
			r.git("update-index", "--index-version", version)
			b, err := os.ReadFile(filepath.Join(r.dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			entries, err := parseIndex(b, 20)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, fmt.Sprintf("%06o %s 0\t%s", e.mode, e.oid, e.path))
			}
			want := strings.Split(strings.TrimSpace(r.git("ls-files", "--stage")), "\n")
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("entries\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			b[len(b)-1] ^= 1
			if _, err := parseIndex(b, 20); err == nil {
				t.Fatal("a bad checksum was accepted")
			}
		})
	}
}

// FuzzParseIndex: any bytes give entries or an error, never a panic, and
// what parses is in order with clean paths.
func FuzzParseIndex(f *testing.F) {
	r := newRepoWithFiles(f, map[string]string{"a.txt": "a\n", "src/b.go": "b\n"})
	for _, v := range []string{"2", "4"} {
		r.git("update-index", "--index-version", v)
		b, err := os.ReadFile(filepath.Join(r.dir, ".git", "index"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := parseIndex(b, 20)
		if err != nil {
			return
		}
		for i, e := range entries {
			if !cleanIndexPath(e.path) || i > 0 && entries[i-1].path >= e.path {
				t.Fatalf("entry %d: %q", i, e.path)
			}
		}
	})
}

// TestQuickStatusRacyEntry: an entry whose cached stat still matches its
// file vouches for the content only if the index was written after the
// file's last change (git's racy-git rule); otherwise the content is
// compared. File systems with fine timestamps rarely make one, so the
// entry is built here.
func TestQuickStatusRacyEntry(t *testing.T) {
	r := newRepo(t)
	r.write("f", "new\n")
	fi, err := os.Lstat(r.path("f"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	e := indexEntry{path: "f", mode: modeFile, oid: blobName([]byte("old\n"), 20),
		ctimeS: uint32(st.Ctim.Sec), ctimeNS: uint32(st.Ctim.Nsec), mtimeS: uint32(st.Mtim.Sec), mtimeNS: uint32(st.Mtim.Nsec),
		dev: uint32(st.Dev), ino: uint32(st.Ino), uid: st.Uid, gid: st.Gid, size: uint32(st.Size)}
	q := &quick{hashLen: 20}
	mtime := st.Mtim.Nano()
	rootFD, err := syscall.Open(r.dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(rootFD)
	if y, _, ok := q.worktree(r.dir, rootFD, e, mtime); !ok || y != 'M' {
		t.Fatalf("index written in the file's second: %q %v, want the content compared (M)", y, ok)
	}
	if y, _, ok := q.worktree(r.dir, rootFD, e, mtime+2*int64(time.Second)); !ok || y != '.' {
		t.Fatalf("index written after: %q %v, want the cached stat trusted (.)", y, ok)
	}
	e.oid = blobName([]byte("new\n"), 20)
	e.size++
	if y, _, ok := q.worktree(r.dir, rootFD, e, mtime+2*int64(time.Second)); !ok || y != '.' {
		t.Fatalf("stat differs, content the same: %q %v, want clean", y, ok)
	}
}

// TestQuickStatusAfterSettling: once directories are older than a stat can
// hide a change in, a snapshot with git reads again only those that
// changed, and what it records still gives git's answer: here after an
// ignore rule changed so that a directory git skipped is walked now.
func TestQuickStatusAfterSettling(t *testing.T) {
	r := newRepoWithFiles(t, map[string]string{"a.txt": "a\n", "src/b.go": "b\n", ".gitignore": "build/\n"})
	r.write("build/out.bin", "o")
	time.Sleep(quickSlack + 100*time.Millisecond)
	prev := r.snapshot()
	if prev.quick == nil {
		t.Fatal("no quick state recorded")
	}
	step := func(what string, change func()) {
		t.Helper()
		change()
		want := gitAnswer(t, prev.loc)
		if got, _, ok := prev.quick.status(prev.loc, nil); ok && !sameStatus(got, want) {
			t.Fatalf("%s: quick %+v, git %+v", what, got, want)
		}
		prev = r.snapshotAfter(prev)
		if prev.quick == nil {
			t.Fatalf("%s: no quick state recorded", what)
		}
		if got, _, ok := prev.quick.status(prev.loc, nil); !ok || !sameStatus(got, gitAnswer(t, prev.loc)) {
			t.Fatalf("%s: the next quick status: %+v %v, git %+v", what, got, ok, gitAnswer(t, prev.loc))
		}
	}
	step("a new file in src", func() { r.write("src/new.go", "n") })
	step("the rule that hid build/ dropped", func() { r.write(".gitignore", "") })
	step("an edit", func() { r.write("a.txt", "edited") })
	if _, ok := prev.Paths["build/out.bin"]; !ok {
		t.Fatalf("build/out.bin not seen once no longer ignored: %v", prev.Paths)
	}
}

// TestQuickRecordRefusesWhatGitDidNotSee: a file made or removed between
// git's look and the walk's makes the two disagree, and nothing is
// recorded (the next snapshot asks git again).
func TestQuickRecordRefusesWhatGitDidNotSee(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *repo)
	}{
		{"made", func(r *repo) { r.write("src/late.txt", "l") }},
		{"removed", func(r *repo) { r.remove("src/u.txt") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepoWithFiles(t, map[string]string{"a.txt": "a\n"})
			r.write("src/u.txt", "u")
			loc := r.snapshot().loc
			q := prepareQuick(loc, nil)
			began := time.Now()
			st, err := gitStatus(context.Background(), loc, true)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(r)
			if q.complete(loc, st, began, nil, nil) != nil {
				t.Fatal("recorded a tree git did not see")
			}
		})
	}
}

// TestQuickStatusLeavesBigIndexesToGit: past quickMaxEntries no quick
// state is kept (a daemon would hold one per loop).
func TestQuickStatusLeavesBigIndexesToGit(t *testing.T) {
	r := newRepoWithFiles(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	if s := r.snapshot(); s.quick == nil {
		t.Fatal("no quick state for a small index")
	}
	defer func(n int) { quickMaxEntries = n }(quickMaxEntries)
	quickMaxEntries = 1
	if s := r.snapshot(); s.quick != nil {
		t.Fatal("a quick state kept for an index past the limit")
	}
}

// TestQuickRecordTakesTheReadBeforeGitOnlyIfGitAgrees: the entries the
// quick status read before git ran stand for the walk only while git's
// answer agrees with them; a file made in between refuses the record.
func TestQuickRecordTakesTheReadBeforeGitOnlyIfGitAgrees(t *testing.T) {
	for _, between := range []bool{false, true} {
		r := newRepoWithFiles(t, map[string]string{"a.txt": "a\n"})
		prev := r.snapshot()
		r.write("made.txt", "m")
		read := map[string]dirRead{}
		if _, _, ok := prev.quick.status(prev.loc, read); ok || len(read) == 0 {
			t.Fatalf("a new file: quick status answered %v, read %v", ok, read)
		}
		if between {
			r.write("late.txt", "l")
		}
		q := prepareQuick(prev.loc, prev.quick)
		began := time.Now()
		st, err := gitStatus(context.Background(), prev.loc, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.complete(prev.loc, st, began, prev.quick, read); (got == nil) != between {
			t.Fatalf("a file made between the read and git: %v; recorded: %v", between, got != nil)
		}
	}
}
