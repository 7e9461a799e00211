package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"ralph/internal/scarce"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 || !info.Mode().IsRegular() {
		t.Errorf("%s: mode %v", path, info.Mode())
	}
	return info.Sys().(*syscall.Stat_t).Ino
}

func spareStore(t *testing.T) (*Store, string, func()) {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.RalphDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	return s, s.StatusFile(), s.KeepSpares()
}

func writeV(t *testing.T, s *Store, path string, v int, durable bool) {
	t.Helper()
	// Each shorter than the last: a reused spare must lose its old tail.
	want := fmt.Sprintf("version %d%s\n", v, strings.Repeat("-", max(0, 40-4*v)))
	if err := s.writeAtomic(path, []byte(want), 0o644, durable); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Fatalf("after write %d: %q", v, got)
	}
}

// While a run keeps spares, rewriting a file swaps two inodes and makes
// none; release leaves no temporary file behind.
func TestSparesSwapTwoInodes(t *testing.T) {
	s, path, release := spareStore(t)
	var seen []uint64
	for v := 1; v <= 6; v++ {
		writeV(t, s, path, v, v%2 == 0)
		seen = append(seen, inode(t, path))
	}
	for i := 3; i < len(seen); i++ {
		if seen[i] != seen[i-2] {
			t.Errorf("write %d made inode %d, not the spare %d: %v", i+1, seen[i], seen[i-2], seen)
		}
	}
	release()
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left after release: %v", entries)
	}
	// Once released, a write is the plain one again.
	writeV(t, s, path, 7, false)
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("a spare kept after release: %v", entries)
	}
}

// A reader never sees a file rewritten under it: a spare someone still has
// open, or that has another link, is left alone and a new file written.
func TestSpareInUseIsNotRewritten(t *testing.T) {
	s, path, release := spareStore(t)
	defer release()
	writeV(t, s, path, 1, false)
	writeV(t, s, path, 2, false) // the spare is now version 1's file
	r, err := os.Open(path)      // a reader of version 2, slow to read it
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	writeV(t, s, path, 3, false) // the spare is now version 2's file, held open
	writeV(t, s, path, 4, true)
	writeV(t, s, path, 5, false)
	if got, _ := io.ReadAll(r); !strings.HasPrefix(string(got), "version 2-") {
		t.Errorf("the reader read %q", got)
	}
	linked := filepath.Join(t.TempDir(), "link")
	if err := os.Link(path, linked); err != nil {
		t.Fatal(err)
	}
	for v := 6; v <= 8; v++ {
		writeV(t, s, path, v, false)
	}
	if got, _ := os.ReadFile(linked); !strings.HasPrefix(string(got), "version 5-") {
		t.Errorf("a file with another link was rewritten: %q", got)
	}
}

// A link at the path is replaced, never written through or kept as a spare.
func TestSparesReplaceALink(t *testing.T) {
	s, path, release := spareStore(t)
	defer release()
	target := filepath.Join(t.TempDir(), "target")
	writeFile(t, target, "outside")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= 3; v++ {
		writeV(t, s, path, v, false)
	}
	if got, _ := os.ReadFile(target); string(got) != "outside" {
		t.Errorf("written through the link: %q", got)
	}
	inode(t, path)
}

// The directory kept open between writes is the one at the path: a state
// directory moved away and made anew gets the next write, and one replaced
// by a link out of the project is refused, not written through.
func TestSparesFollowTheDirectory(t *testing.T) {
	s, path, release := spareStore(t)
	defer release()
	writeV(t, s, path, 1, true)
	writeV(t, s, path, 2, false)
	dir := filepath.Dir(path)
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeV(t, s, path, 3, true)
	if got, _ := os.ReadFile(filepath.Join(dir+".moved", filepath.Base(path))); !strings.HasPrefix(string(got), "version 2-") {
		t.Errorf("the moved directory's file: %q", got)
	}
	outside := t.TempDir()
	if err := os.Rename(dir, dir+".moved2"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
	if err := s.writeAtomic(path, []byte("x"), 0o644, false); err == nil {
		t.Error("wrote through a linked state directory")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside: %v", entries)
	}
}

// A write that fails names the file in full: a loop waiting on a full
// disk shows the path its error carries.
func TestSpareWriteErrorNamesThePath(t *testing.T) {
	err := pathError("/p/.ralph/.loop_state", &fs.PathError{Op: "write", Path: "..loop_state.tmp-1", Err: syscall.ENOSPC})
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "/p/.ralph/.loop_state" || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("%v", err)
	}
	if got := scarce.Reason(err, ""); got != "disk full writing /p/.ralph/.loop_state; retrying" {
		t.Errorf("reason %q", got)
	}
}
