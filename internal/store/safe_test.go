//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Every writer of the package, pointed at a file whose name or directory is
// a link planted by a repository: the link's target must stay as it was.
func TestWritesNeverFollowLinks(t *testing.T) {
	type setup func(t *testing.T, proj, target string) string // returns the path to write
	linkFile := func(rel string) setup {
		return func(t *testing.T, proj, target string) string {
			p := filepath.Join(proj, rel)
			mustMkdir(t, filepath.Dir(p))
			mustSymlink(t, target, p)
			return p
		}
	}
	linkDir := func(dirRel, file string) setup {
		return func(t *testing.T, proj, target string) string {
			d := filepath.Join(proj, dirRel)
			mustMkdir(t, filepath.Dir(d))
			mustSymlink(t, filepath.Dir(target), d)
			return filepath.Join(d, file)
		}
	}
	writers := map[string]func(path string) error{
		"OpenFile": func(p string) error {
			f, err := OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		},
		"AppendMetrics": func(p string) error { return AppendMetrics(p, map[string]int{"a": 1}) },
		"RotatingWriter": func(p string) error {
			w, err := NewRotatingWriter(p, 10, 1)
			if err == nil {
				_, err = w.Write([]byte("agent text\n"))
				w.Close()
			}
			return err
		},
		"AcquireLock": func(p string) error {
			l, err := AcquireLock(p)
			if err == nil {
				l.Release()
			}
			return err
		},
		"WriteFileAtomic": func(p string) error { return WriteFileAtomic(p, []byte("new"), 0o644) },
	}
	cases := map[string]struct {
		setup       setup
		atomicOK    bool // an atomic write replaces the link instead of refusing
		wantEscapes bool
	}{
		"linked lock file":       {setup: linkFile(".ralph/ralph.lock"), atomicOK: true},
		"linked log":             {setup: linkFile(".ralph/logs/ralph.log"), atomicOK: true},
		"linked logs directory":  {setup: linkDir(".ralph/logs", "metrics.jsonl"), wantEscapes: true},
		"linked state directory": {setup: linkDir(".ralph", "status.json"), wantEscapes: true},
		"linked status file":     {setup: linkFile(".ralph/status.json"), atomicOK: true},
	}
	for name, c := range cases {
		for wname, write := range writers {
			t.Run(name+"/"+wname, func(t *testing.T) {
				home := t.TempDir()
				target := filepath.Join(home, ".bashrc")
				if err := os.WriteFile(target, []byte("original"), 0o644); err != nil {
					t.Fatal(err)
				}
				proj := t.TempDir()
				p := c.setup(t, proj, target)
				err := write(p)
				if got, _ := os.ReadFile(target); string(got) != "original" {
					t.Fatalf("the link's target was written: %q", got)
				}
				if entries, _ := os.ReadDir(home); len(entries) != 1 {
					t.Fatalf("files appeared next to the target: %v", entries)
				}
				var se *SymlinkError
				var ee *EscapeError
				switch {
				case wname == "WriteFileAtomic" && c.atomicOK:
					if err != nil {
						t.Fatalf("atomic write should replace the link: %v", err)
					}
					if info, _ := os.Lstat(p); info == nil || !info.Mode().IsRegular() {
						t.Fatalf("%s is not a regular file after the write", p)
					}
				case c.wantEscapes && !errors.As(err, &ee):
					t.Fatalf("want an EscapeError, got %v", err)
				case !c.wantEscapes && !errors.As(err, &se):
					t.Fatalf("want a SymlinkError, got %v", err)
				}
			})
		}
	}
}

// A link inside the project to another file of the project is refused too:
// the lock must not truncate a source file.
func TestLinkInsideProjectRefused(t *testing.T) {
	proj := t.TempDir()
	src := filepath.Join(proj, "main.go")
	if err := os.WriteFile(src, []byte("package main"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Join(proj, ".ralph"))
	mustSymlink(t, "../main.go", filepath.Join(proj, ".ralph", "ralph.lock"))
	if _, err := AcquireLock(filepath.Join(proj, ".ralph", "ralph.lock")); err == nil {
		t.Fatal("lock through a link was taken")
	}
	if got, _ := os.ReadFile(src); string(got) != "package main" {
		t.Fatalf("main.go changed: %q", got)
	}
}

func mustMkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// Retention and the temporary-file sweep delete files: a linked directory
// must not lead them out of the project.
func TestDeletersRefuseLinkedDirs(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "iteration_1_20260101T000000Z.stdout.log")
	stale := filepath.Join(outside, ".x"+tempMarker+"1")
	for _, p := range []string{victim, stale} {
		if err := os.WriteFile(p, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-48 * time.Hour)
	_ = os.Chtimes(stale, past, past)
	logs := filepath.Join(t.TempDir(), "logs")
	mustSymlink(t, outside, logs)
	// A second iteration, so that keeping one would delete the first.
	if err := os.WriteFile(filepath.Join(outside, "iteration_2_20260101T000000Z.stdout.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var se *SymlinkError
	if _, err := PruneIterationLogs(logs, 1); !errors.As(err, &se) {
		t.Errorf("prune through a link: %v", err)
	}
	if _, err := RemoveStaleTemps(logs, time.Hour, time.Now()); !errors.As(err, &se) {
		t.Errorf("sweep through a link: %v", err)
	}
	for _, p := range []string{victim, stale} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s deleted through a link", p)
		}
	}
}
