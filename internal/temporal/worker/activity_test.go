package worker

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A call writes the task's prompt only when it is not what the file holds:
// the same prompt again leaves the file as it was (no durable rewrite per
// call); a changed one replaces it.
func TestPromptWrittenOnlyWhenChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompts", "s.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	inode := func() uint64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	if err := writePrompt(path, "Do it.\n"); err != nil {
		t.Fatal(err)
	}
	first := inode()
	if err := writePrompt(path, "Do it.\n"); err != nil {
		t.Fatal(err)
	}
	if inode() != first {
		t.Error("the same prompt was written again (a new file renamed over it)")
	}
	if err := writePrompt(path, "Do it better.\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "Do it better.\n" {
		t.Errorf("the file holds %q after a changed prompt", b)
	}
}
