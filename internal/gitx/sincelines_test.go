package gitx

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// changedOnly keeps the paths whose status changed from before to after
// and is not untracked: what linesInProcess answers for.
func changedOnly(before, after Snap, lines map[string]Lines) map[string]Lines {
	out := map[string]Lines{}
	for p, l := range lines {
		if fp, ok := after.Paths[p]; ok && before.Paths[p] != fp && !strings.HasPrefix(fp, "?") {
			out[p] = l
		}
	}
	return out
}

// On many random edits of a real repository (tracked files modified,
// deleted, emptied, made binary, left without a final newline, their mode
// changed, staged or not, new files staged or not, reverted), the line
// counts read in-process are git's own.
func TestLinesInProcessMatchGit(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 2))
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("f%d.txt", i)] = randomText(rng, 30)
	}
	files["dir/sub/deep.go"] = "package sub\n\nfunc f() {\n}\n"
	files["empty"] = ""
	files["no-newline.txt"] = "one\ntwo"
	files["blob.bin"] = "\x00\x01\x02bin\n"
	r := newRepoWithFiles(t, files)
	ctx := context.Background()
	rounds, checked := 60, 0
	if testing.Short() {
		rounds = 15
	}
	for round := range rounds {
		before := r.snapshot()
		for range 1 + rng.IntN(4) {
			randomEdit(t, rng, r)
		}
		after := r.snapshotAfter(before)
		want, err := diffLines(ctx, after.loc, before.Head, false)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := linesInProcess(after.loc, before, after)
		if !ok {
			t.Fatalf("round %d: not counted in-process; status %v", round, after.Paths)
		}
		if w := changedOnly(before, after, want); !reflect.DeepEqual(got, w) {
			t.Fatalf("round %d: in-process %v\ngit %v\nstatus before %v\nafter %v", round, got, w, before.Paths, after.Paths)
		}
		// What the loop sees, Compare's progress, is the same either way.
		viaGit := after
		viaGit.Since = &Since{Base: before.Head, Lines: want}
		for p, fp := range after.Paths {
			if strings.HasPrefix(fp, "?") && before.Paths[p] != fp {
				want[p] = countLines(r.path(p))
			}
		}
		if p, q := Compare(before, after), Compare(before, viaGit); !reflect.DeepEqual(p, q) {
			t.Fatalf("round %d: progress %+v, through git %+v", round, p, q)
		}
		checked += len(got)
		if rng.IntN(4) == 0 {
			r.git("add", "-A")
			r.git("commit", "-q", "--allow-empty", "-m", fmt.Sprint("round ", round))
		}
	}
	if checked < rounds {
		t.Errorf("only %d paths counted in %d rounds", checked, rounds)
	}
}

func randomText(rng *rand.Rand, lines int) string {
	words := []string{"", "}", "return nil", "x := 1", "if err != nil {"}
	var b strings.Builder
	for i := range rng.IntN(lines) {
		if rng.IntN(2) == 0 {
			b.WriteString(words[rng.IntN(len(words))])
		} else {
			fmt.Fprintf(&b, "line %d %d", i, rng.IntN(5))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// randomEdit does one thing an agent could do to the repository.
func randomEdit(t *testing.T, rng *rand.Rand, r *repo) {
	t.Helper()
	var tracked []string
	for _, p := range strings.Split(strings.TrimSuffix(r.git("ls-files"), "\n"), "\n") {
		if p != "" {
			tracked = append(tracked, p)
		}
	}
	sort.Strings(tracked)
	p := fmt.Sprintf("new%d.txt", rng.IntN(6))
	if len(tracked) > 0 && rng.IntN(5) > 0 {
		p = tracked[rng.IntN(len(tracked))]
	}
	old := ""
	if r.exists(p) {
		old = r.read(p)
	}
	switch rng.IntN(10) {
	case 0:
		if r.exists(p) {
			r.remove(p)
		}
	case 1:
		r.write(p, "")
	case 2:
		r.write(p, old+"\x00binary now")
	case 3:
		r.write(p, strings.TrimSuffix(old, "\n"))
	case 4:
		if r.exists(p) {
			if err := os.Chmod(r.path(p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	case 5:
		r.write(p, string(mutate(rng, []byte(old), []string{"", "}", "return nil"})))
		r.git("add", "--", p)
	case 6:
		r.git("checkout", "-q", "HEAD", "--", ".")
	default:
		r.write(p, string(mutate(rng, []byte(old), []string{"", "}", "return nil"})))
	}
	if rng.IntN(6) == 0 {
		r.git("add", "-A")
	}
}

// gitLog puts a git on PATH that logs its arguments before running the
// real one, and returns how many runs of a subcommand it logged since.
func gitLog(t *testing.T) func(sub string) int {
	t.Helper()
	real := gitExe()
	dir := t.TempDir()
	log := filepath.Join(dir, "git.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func(sub string) int {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		n := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(" "+l+" ", " "+sub+" ") {
				n++
			}
		}
		return n
	}
}

// An iteration that edited tracked files starts no git beyond its status
// while every blob it needs is loose; whenever the in-process count could
// differ from git's (a packed blob, attributes, configuration, line
// endings, a big file, a link, HEAD moved), git counts, as before, and
// the figures are git's.
func TestLinesInProcessOrGit(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("0123456789abcde\n", maxInProcess/16+1)
	tests := []struct {
		name   string
		setup  func(r *repo)
		edit   func(r *repo)
		viaGit bool
		added  int
		remove int
	}{
		{name: "loose blobs", edit: func(r *repo) { r.write("a.txt", "1\ntwo\n3\n4\n"); r.remove("b.txt") }, added: 2, remove: 2},
		{name: "a staged edit", edit: func(r *repo) { r.write("a.txt", "1\n"); r.git("add", "a.txt") }, remove: 2},
		{name: "packed blobs", setup: func(r *repo) { r.git("repack", "-adq") }, edit: func(r *repo) { r.write("a.txt", "1\ntwo\n3\n4\n"); r.remove("b.txt") }, viaGit: true, added: 2, remove: 2},
		{name: "after gc", setup: func(r *repo) { r.git("gc", "-q") }, edit: func(r *repo) { r.write("a.txt", "1\n") }, viaGit: true, remove: 2},
		{name: "attributes at the root", setup: func(r *repo) { r.write(".gitattributes", "*.txt -diff\n") }, edit: func(r *repo) { r.write("a.txt", "1\n") }, viaGit: true},
		{name: "attributes above the file", setup: func(r *repo) { r.write("d/.gitattributes", "*.txt -diff\n") }, edit: func(r *repo) { r.write("d/e.txt", "x\n") }, viaGit: true},
		{name: "the repository's attributes", setup: func(r *repo) { r.write(".git/info/attributes", "*.txt -diff\n") }, edit: func(r *repo) { r.write("a.txt", "1\n") }, viaGit: true},
		{name: "line endings configured", setup: func(r *repo) { r.git("config", "core.autocrlf", "input") }, edit: func(r *repo) { r.write("a.txt", "1\n") }, viaGit: true, remove: 2},
		{name: "another diff algorithm", setup: func(r *repo) { r.git("config", "diff.algorithm", "histogram") }, edit: func(r *repo) { r.write("a.txt", "1\n") }, viaGit: true, remove: 2},
		{name: "an included configuration", setup: func(r *repo) { r.git("config", "include.path", "other") }, edit: func(r *repo) { r.write("a.txt", "1\n") }, viaGit: true, remove: 2},
		{name: "a carriage return", edit: func(r *repo) { r.write("a.txt", "1\r\n2\n3\n") }, viaGit: true, added: 1, remove: 1},
		{name: "a big file", edit: func(r *repo) { r.write("a.txt", big) }, viaGit: true, added: maxInProcess/16 + 1, remove: 3},
		{name: "a link", edit: func(r *repo) { r.remove("b.txt"); os.Symlink("a.txt", r.path("b.txt")) }, viaGit: true, added: 1, remove: 1},
		{name: "HEAD moved", edit: func(r *repo) { r.write("a.txt", "1\n"); r.git("commit", "-qam", "during") }, viaGit: true, remove: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRepoWithFiles(t, map[string]string{"a.txt": "1\n2\n3\n", "b.txt": "b\n", "d/e.txt": "e\n"})
			if tt.setup != nil {
				tt.setup(r)
				r.git("add", "-A")
				r.git("commit", "-qm", "setup", "--allow-empty")
			}
			runs := gitLog(t)
			before := r.snapshot()
			tt.edit(r)
			runs("diff")
			after := r.snapshotAfter(before)
			if n := runs("diff"); (n == 1) != tt.viaGit || n > 1 {
				t.Errorf("%d git diff processes, want via git: %v", n, tt.viaGit)
			}
			p := Compare(before, after)
			if p.LinesAdded != tt.added || p.LinesRemoved != tt.remove {
				t.Errorf("+%d -%d, want +%d -%d", p.LinesAdded, p.LinesRemoved, tt.added, tt.remove)
			}
			want, err := diffLines(ctx, after.loc, before.Head, after.Head != before.Head)
			if err != nil {
				t.Fatal(err)
			}
			if w := changedOnly(before, after, want); !reflect.DeepEqual(changedOnly(before, after, after.Since.Lines), w) {
				t.Errorf("lines %v, git %v", after.Since.Lines, w)
			}
		})
	}
}

// A SHA-256 repository's loose objects are read too.
func TestLinesInProcessSHA256(t *testing.T) {
	t.Parallel()
	r := &repo{tb: t, dir: t.TempDir()}
	r.git("init", "-q", "--object-format=sha256", "-b", "main")
	r.write("a.txt", "1\n2\n3\n")
	r.git("add", "-A")
	r.git("commit", "-qm", "initial")
	before := r.snapshot()
	r.write("a.txt", "1\n3\n4\n5\n")
	after := r.snapshotAfter(before)
	got, ok := linesInProcess(after.loc, before, after)
	if want := map[string]Lines{"a.txt": {Added: 2, Removed: 1}}; !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("in-process %v %v, want %v", got, ok, want)
	}
}

// The object reader takes only well-formed names, reads no link, and
// checks what it read against the name.
func TestReadLooseBlob(t *testing.T) {
	t.Parallel()
	r := newRepoWithFiles(t, map[string]string{"a.txt": "alpha\n"})
	oid := strings.TrimSpace(r.git("rev-parse", "HEAD:a.txt"))
	root, err := os.OpenRoot(r.path(".git"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if b, err := readLooseBlob(root, oid, maxInProcess); err != nil || string(b) != "alpha\n" {
		t.Fatalf("read %q, %v", b, err)
	}
	if _, err := readLooseBlob(root, oid, 3); err != errTooBig {
		t.Errorf("past the limit: %v", err)
	}
	for _, bad := range []string{"", "../../../etc/passwd", strings.ToUpper(oid), oid[:39], oid + "0", "g" + oid[1:], "../" + oid[3:]} {
		if _, err := readLooseBlob(root, bad, maxInProcess); err == nil || err == errNotLoose {
			t.Errorf("name %q: %v", bad, err)
		}
	}
	if _, err := readLooseBlob(root, strings.Repeat("ab", 20), maxInProcess); err != errNotLoose {
		t.Errorf("a missing object: %v", err)
	}
	if b, err := readLooseBlob(root, emptyBlobSHA1, maxInProcess); err != nil || len(b) != 0 {
		t.Errorf("the empty blob: %q, %v", b, err)
	}

	// The commit's object is not a blob.
	if _, err := readLooseBlob(root, r.head(), maxInProcess); err == nil {
		t.Error("a commit read as a blob")
	}
	// Another blob's content under this name does not match it.
	r.write("other.txt", "other\n")
	other := strings.TrimSpace(r.git("hash-object", "-w", "other.txt"))
	obj := func(o string) string { return r.path(".git/objects/" + o[:2] + "/" + o[2:]) }
	content, err := os.ReadFile(obj(other))
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(obj(oid), 0o644)
	if err := os.WriteFile(obj(oid), content, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readLooseBlob(root, oid, maxInProcess); err == nil {
		t.Error("a blob read under another's name")
	}
	// A link as the object file, even to the right content, is refused.
	outside := filepath.Join(t.TempDir(), "obj")
	if err := os.WriteFile(outside, content, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(obj(other))
	if err := os.Symlink(outside, obj(other)); err != nil {
		t.Fatal(err)
	}
	if _, err := readLooseBlob(root, other, maxInProcess); err == nil {
		t.Error("an object read through a link")
	}
}

// A working file is read only inside the work tree, never through a link.
func TestReadWorkFileStaysInside(t *testing.T) {
	t.Parallel()
	r := newRepoWithFiles(t, map[string]string{"a.txt": "alpha\n"})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(outside, r.path("out"))
	os.Symlink(filepath.Join(outside, "secret"), r.path("link"))
	os.Symlink("a.txt", r.path("inner"))
	tree, err := os.OpenRoot(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if b, err := readWorkFile(tree, "a.txt", maxInProcess); err != nil || string(b) != "alpha\n" {
		t.Fatalf("read %q, %v", b, err)
	}
	for _, p := range []string{"out/secret", "link", "inner", "../" + filepath.Base(outside) + "/secret", "."} {
		if b, err := readWorkFile(tree, p, maxInProcess); err == nil {
			t.Errorf("%s read: %q", p, b)
		}
	}
	if _, err := readWorkFile(tree, "a.txt", 3); err != errTooBig {
		t.Errorf("past the limit: %v", err)
	}
}

// Only configuration known not to bear on the count is plain.
func TestPlainConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		text  string
		plain bool
	}{
		{"", true},
		{"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n", true},
		{"[remote \"origin\"]\n\turl = x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n", true},
		{"# comment\n; another\n[user]\n\tname = x # trailing\n", true},
		{"[extensions]\n\tobjectformat = sha256\n", true},
		{"[core]\n\tautocrlf = input\n", false},
		{"[core]\n\teol = crlf\n", false},
		{"[core]\n\tfilemode = false\n", false},
		{"[core]\n\tbigFileThreshold = 1k\n", false},
		{"[core]\n\tattributesFile = x\n", false},
		{"[diff]\n\talgorithm = histogram\n", false},
		{"[include]\n\tpath = x\n", false},
		{"[includeIf \"gitdir:/\"]\n\tpath = x\n", false},
		{"[core] autocrlf = true\n", false},
		{"[user]\n\tname = a \\\n\tb\n[core]\n\tautocrlf = true\n", false},
		{"[CORE]\n\tAutoCRLF = true\n", false},
	}
	for i, tt := range tests {
		p := filepath.Join(dir, fmt.Sprint("config", i))
		if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := plainConfig(p); got != tt.plain {
			t.Errorf("%q: plain %v, want %v", tt.text, got, tt.plain)
		}
	}
	if !plainConfig(filepath.Join(dir, "missing")) {
		t.Error("a missing file is not plain")
	}
}

// A linked worktree of a sandboxed run (its git directories pinned by a
// guard) reads the loose objects of the repository's common directory.
func TestLinesInProcessLinkedWorktree(t *testing.T) {
	r := newRepoWithFiles(t, map[string]string{"a.txt": "1\n2\n3\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", wt)
	w := &repo{tb: t, dir: wt}
	g, err := Protect(context.Background(), wt)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	runs := gitLog(t)
	before := w.snapshot()
	w.write("a.txt", "1\n2\n")
	runs("diff")
	after := w.snapshotAfter(before)
	if n := runs("diff"); n != 0 {
		t.Errorf("%d git diff processes", n)
	}
	if p := Compare(before, after); p.LinesAdded != 0 || p.LinesRemoved != 1 {
		t.Errorf("+%d -%d, want -1", p.LinesAdded, p.LinesRemoved)
	}
}
