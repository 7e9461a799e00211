package gitx

import (
	"os"
	"path/filepath"
	"testing"
)

// git is looked up once per PATH: a PATH that puts another git first is
// followed at once, and the run's git comes back with the PATH.
func TestGitExeFollowsPath(t *testing.T) {
	real := gitExe()
	if !filepath.IsAbs(real) {
		t.Fatalf("git not found on PATH: %q", real)
	}
	shim := t.TempDir()
	other := filepath.Join(shim, "git")
	if err := os.WriteFile(other, []byte("#!/bin/sh\nexec "+real+` "$@"`+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := os.Getenv("PATH")
	t.Setenv("PATH", shim+string(os.PathListSeparator)+old)
	if got := gitExe(); got != other {
		t.Errorf("with the shim first: %s", got)
	}
	os.Setenv("PATH", old)
	if got := gitExe(); got != real {
		t.Errorf("PATH restored: %s", got)
	}
}
