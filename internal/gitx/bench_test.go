package gitx

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkSnapshot measures one snapshot with git of a 2,000-file
// repository with 50 modified tracked files and 10 untracked ones: a run's
// first, and one after a call that made a file or a commit.
func BenchmarkSnapshot(b *testing.B) {
	r := benchRepo(b)
	ctx := context.Background()
	for b.Loop() {
		s, err := Snapshot(ctx, r.dir)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Paths) != 60 {
			b.Fatalf("%d paths", len(s.Paths))
		}
	}
}

// BenchmarkSnapshotAfter measures the snapshot after a call that edited a
// tracked file of the same repository: the quick status, no git process.
func BenchmarkSnapshotAfter(b *testing.B) {
	r := benchRepo(b)
	ctx := context.Background()
	prev, err := Snapshot(ctx, r.dir)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		r.write("pkg00/file0000.go", fmt.Sprintf("modified %d\n", i))
		if prev, err = SnapshotAfter(ctx, r.dir, prev); err != nil {
			b.Fatal(err)
		}
		if len(prev.Paths) != 60 {
			b.Fatalf("%d paths", len(prev.Paths))
		}
	}
}

// BenchmarkSnapshotAfterNewFile measures the snapshot after a call that
// made a file: git's status, and a walk that reads again only the
// directory that changed.
func BenchmarkSnapshotAfterNewFile(b *testing.B) {
	r := benchRepo(b)
	ctx := context.Background()
	prev, err := Snapshot(ctx, r.dir)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		if i > 1 {
			r.remove(fmt.Sprintf("new/made%d.go", i-1))
		}
		r.write(fmt.Sprintf("new/made%d.go", i), "made\n")
		if prev, err = SnapshotAfter(ctx, r.dir, prev); err != nil {
			b.Fatal(err)
		}
		if len(prev.Paths) != 61 {
			b.Fatalf("%d paths", len(prev.Paths))
		}
	}
}

func benchRepo(b *testing.B) *repo {
	files := make(map[string]string, 2000)
	for i := range 2000 {
		files[fmt.Sprintf("pkg%02d/file%04d.go", i%40, i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), 200)
	}
	r := newRepoWithFiles(b, files)
	for i := range 50 {
		r.write(fmt.Sprintf("pkg%02d/file%04d.go", i%40, i*40), "modified\n")
	}
	for i := range 10 {
		r.write(fmt.Sprintf("new/untracked%d.go", i), strings.Repeat("x", 4096))
	}
	// As a repository between two calls usually is: its directories
	// unchanged for longer than a stat can hide a change in.
	time.Sleep(quickSlack)
	return r
}

// BenchmarkGuardCheck measures the check a guard makes before every host
// git of a sandboxed project: a fresh repository's configuration, its
// sample hooks and info/, hashed and compared.
func BenchmarkGuardCheck(b *testing.B) {
	r := newRepoWithFiles(b, map[string]string{"a": "1"})
	g, err := Protect(context.Background(), r.dir)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Release()
	for b.Loop() {
		if err := g.Check(); err != nil {
			b.Fatal(err)
		}
	}
}
