package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A task file is read as a project's plan is: never through a link, and
// never past its cap. Every reader of the daemon refuses, naming the file,
// and the link's target is neither read into the task nor changed.
func TestTaskFileReadsRefuseLinksAndOversize(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	const key = "- [ ] SECRET KEY\n"
	if err := os.WriteFile(secret, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	tk := Task{ID: "t1", Session: "5", Title: "Add auth", File: filepath.Join(dir, "5-task.md"), CreatedAt: t0}
	if err := os.Symlink(secret, tk.File); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"checkTaskFile":   checkTaskFile(tk, t0),
		"rewriteTaskFile": rewriteTaskFile(tk.File, "DONE", nil),
	} {
		if err == nil || !strings.Contains(err.Error(), "5-task.md: it is a symbolic link") {
			t.Errorf("%s: %v, want a refusal naming the file", name, err)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != key {
		t.Errorf("the link's target changed: %q", b)
	}

	big := filepath.Join(dir, "6-task.md")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(9 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = readTaskFile(big)
	if err == nil || !strings.Contains(err.Error(), "6-task.md: it is 9 MiB, over the 8 MiB limit") {
		t.Errorf("oversized: %v", err)
	}
}
