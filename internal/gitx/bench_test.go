package gitx

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkSnapshot measures one snapshot of a 2,000-file repository with
// 50 modified tracked files and 10 untracked ones — the cost ralph pays
// twice per iteration.
func BenchmarkSnapshot(b *testing.B) {
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
