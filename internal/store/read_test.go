//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/plan"
)

// ReadIn under every shape a repository can give a file: only a regular
// file inside the root, not a link, within the cap, is read.
func TestReadInRefusesLinksEscapesAndOversize(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, proj, secret string) string // returns the path to read
		limit int64
		want  string // "" reads "plain\n"; else a part of the error
	}{
		{"regular file", func(t *testing.T, proj, _ string) string {
			return writeRead(t, filepath.Join(proj, ".ralph", "PROMPT.md"), "plain\n")
		}, 100, ""},
		{"file is a link out", func(t *testing.T, proj, secret string) string {
			p := filepath.Join(proj, ".ralph", "PROMPT.md")
			mustMkdir(t, filepath.Dir(p))
			mustSymlink(t, secret, p)
			return p
		}, 100, "PROMPT.md: it is a symbolic link"},
		{"file is a link inside", func(t *testing.T, proj, _ string) string {
			writeRead(t, filepath.Join(proj, "docs", "p.md"), "plain\n")
			p := filepath.Join(proj, ".ralph", "PROMPT.md")
			mustMkdir(t, filepath.Dir(p))
			mustSymlink(t, "../docs/p.md", p)
			return p
		}, 100, "it is a symbolic link"},
		{"linked .ralph leads out", func(t *testing.T, proj, secret string) string {
			mustSymlink(t, filepath.Dir(secret), filepath.Join(proj, ".ralph"))
			return filepath.Join(proj, ".ralph", filepath.Base(secret))
		}, 100, "leads out of"},
		{"linked .ralph inside the project", func(t *testing.T, proj, _ string) string {
			writeRead(t, filepath.Join(proj, "state", "PROMPT.md"), "plain\n")
			mustSymlink(t, "state", filepath.Join(proj, ".ralph"))
			return filepath.Join(proj, ".ralph", "PROMPT.md")
		}, 100, ""},
		{"a directory", func(t *testing.T, proj, _ string) string {
			p := filepath.Join(proj, ".ralph", "PROMPT.md")
			mustMkdir(t, p)
			return p
		}, 100, "not a regular file"},
		{"a FIFO does not hang", func(t *testing.T, proj, _ string) string {
			p := filepath.Join(proj, ".ralph", "PROMPT.md")
			mustMkdir(t, filepath.Dir(p))
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, 100, "not a regular file"},
		{"over the cap", func(t *testing.T, proj, _ string) string {
			return writeRead(t, filepath.Join(proj, ".ralph", "fix_plan.md"), strings.Repeat("x", 101))
		}, 100, "fix_plan.md: it is 101 bytes, over the 100 bytes limit"},
		{"at the cap", func(t *testing.T, proj, _ string) string {
			return writeRead(t, filepath.Join(proj, ".ralph", "fix_plan.md"), "plain\n")
		}, 6, ""},
		{"missing", func(t *testing.T, proj, _ string) string {
			return filepath.Join(proj, ".ralph", "PROMPT.md")
		}, 100, "no such file"},
		{"outside the root: own directory", func(t *testing.T, _, _ string) string {
			return writeRead(t, filepath.Join(t.TempDir(), "handoffs", "s.md"), "plain\n")
		}, 100, ""},
		{"outside the root, a link", func(t *testing.T, _, secret string) string {
			p := filepath.Join(t.TempDir(), "s.md")
			mustSymlink(t, secret, p)
			return p
		}, 100, "it is a symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proj := t.TempDir()
			secret := writeRead(t, filepath.Join(t.TempDir(), "id_ed25519"), "SECRET\n")
			path := tt.setup(t, proj, secret)
			done := make(chan struct{})
			var got []byte
			var err error
			go func() { got, err = ReadIn(proj, path, tt.limit); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("ReadIn hung")
			}
			cerr := CheckIn(proj, path, tt.limit)
			if tt.want == "" {
				if err != nil || string(got) != "plain\n" || cerr != nil {
					t.Fatalf("ReadIn = %q, %v; CheckIn = %v", got, err, cerr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadIn = %q, %v; want an error with %q", got, err, tt.want)
			}
			if cerr == nil || cerr.Error() != err.Error() {
				t.Fatalf("CheckIn = %v, ReadIn = %v: they must agree", cerr, err)
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(string(got), "SECRET") {
				t.Fatal("the secret was read")
			}
			if errors.Is(err, fs.ErrNotExist) == IsReadRefusal(err) {
				t.Fatalf("%v: a refusal and a missing file must be told apart", err)
			}
		})
	}
}

// A 4 GiB sparse plan is refused from its size alone: the refusal is quick
// and allocates almost nothing, where reading it would take gigabytes.
func TestLoadPlanOverCapReadsNothing(t *testing.T) {
	proj := t.TempDir()
	p := filepath.Join(proj, ".ralph", "fix_plan.md")
	mustMkdir(t, filepath.Dir(p))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err = LoadPlan(proj, p, plan.Options{})
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	var te *TooLargeError
	if !errors.As(err, &te) || te.Size != 4<<30 || te.Limit != MaxPlanSize {
		t.Fatalf("LoadPlan = %v, want a TooLargeError of 4 GiB over %d", err, MaxPlanSize)
	}
	if want := "fix_plan.md: it is 4096 MiB, over the 8 MiB limit"; !strings.Contains(err.Error(), want) {
		t.Fatalf("%v: want %q", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("the refusal allocated %d bytes", alloc)
	}
	if took > 2*time.Second {
		t.Fatalf("the refusal took %s", took)
	}
}

func writeRead(t *testing.T, path, content string) string {
	t.Helper()
	mustMkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
