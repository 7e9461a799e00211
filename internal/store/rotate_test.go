package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestRotatingWriter(t *testing.T) {
	tests := []struct {
		name      string
		max       int64
		keep      int
		writes    int // lines of 10 bytes
		wantFiles []string
		wantLive  int // lines in the live file
	}{
		{"no rotation yet", 100, 4, 10, []string{"ralph.log"}, 10},
		{"one rotation", 100, 4, 11, []string{"ralph.log", "ralph.log.1"}, 1},
		{"bounded at keep", 100, 2, 55, []string{"ralph.log", "ralph.log.1", "ralph.log.2"}, 5},
		{"keep none", 100, 0, 25, []string{"ralph.log"}, 5},
		{"rotation off", 0, 4, 50, []string{"ralph.log"}, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "logs", "ralph.log")
			w, err := NewRotatingWriter(p, tt.max, tt.keep)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.writes {
				if _, err := fmt.Fprintf(w, "line %04d\n", i); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(filepath.Join(dir, "logs"))
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if strings.Join(names, " ") != strings.Join(tt.wantFiles, " ") {
				t.Fatalf("files %v, want %v", names, tt.wantFiles)
			}
			live, _ := os.ReadFile(p)
			if n := strings.Count(string(live), "\n"); n != tt.wantLive {
				t.Errorf("live file has %d lines, want %d", n, tt.wantLive)
			}
			// The newest lines are in the live file, the ones before in .1.
			if !strings.HasSuffix(string(live), fmt.Sprintf("line %04d\n", tt.writes-1)) {
				t.Errorf("live file does not end with the last line: %q", live)
			}
			if len(tt.wantFiles) > 1 {
				old, _ := os.ReadFile(p + ".1")
				if !strings.HasSuffix(string(old), fmt.Sprintf("line %04d\n", tt.writes-tt.wantLive-1)) {
					t.Errorf(".1 does not hold the lines just before: %q", old)
				}
			}
			if _, err := w.Write([]byte("x")); err == nil {
				t.Error("write after Close succeeded")
			}
		})
	}
}

func TestRotatingWriterResumesSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ralph.log")
	writeFile(t, p, strings.Repeat("x", 95))
	w, err := NewRotatingWriter(p, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p + ".1"); len(b) != 95 {
		t.Errorf("existing content not rotated out: %d bytes", len(b))
	}
}

func TestRotatingWriterOversizedWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ralph.log")
	w, err := NewRotatingWriter(p, 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	big := strings.Repeat("y", 50)
	for _, s := range []string{"a\n", big, "b\n"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	for file, want := range map[string]string{p + ".2": "a\n", p + ".1": big, p: "b\n"} {
		if b, _ := os.ReadFile(file); string(b) != want {
			t.Errorf("%s = %q, want %q", filepath.Base(file), b, want)
		}
	}
}

// Concurrent writers: every line arrives whole and exactly once across the
// live and kept files (enough are kept that nothing is dropped).
func TestRotatingWriterConcurrent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ralph.log")
	w, err := NewRotatingWriter(p, 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, lines = 8, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(w, "g%d line %03d\n", g, i)
			}
		})
	}
	wg.Wait()
	w.Close()
	files, _ := filepath.Glob(p + "*")
	seen := map[string]bool{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if len(b) > 1000 {
			t.Errorf("%s has %d bytes, over the limit", f, len(b))
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if seen[l] || !strings.HasPrefix(l, "g") || len(l) != len("g0 line 000") {
				t.Fatalf("duplicate or torn line %q", l)
			}
			seen[l] = true
		}
	}
	if len(seen) != goroutines*lines {
		t.Fatalf("%d lines, want %d", len(seen), goroutines*lines)
	}
}
