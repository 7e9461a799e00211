package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The temp directories of ralph processes that are gone are removed; a
// live one's, an older name without a pid, and anything else are not.
func TestSweepTmpRemovesOnlyTheDeads(t *testing.T) {
	dir := t.TempDir()
	const dead, live = 4242, 77
	names := map[string]bool{ // name: removed
		tmpBase + strconv.Itoa(dead) + "-123": true,
		tmpBase + strconv.Itoa(dead) + "-456": true,
		tmpBase + strconv.Itoa(live) + "-789": false,
		tmpBase + "993615511":                 false,
		tmpBase + "x-1":                       false,
		"other-4242-1":                        false,
	}
	for n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, tmpBase+strconv.Itoa(dead)+"-file"), nil, 0o600)
	got := sweepTmp(dir, func(pid int) bool { return pid == live })
	if got != 2 {
		t.Errorf("removed %d, want 2", got)
	}
	for n, removed := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); os.IsNotExist(err) != removed {
			t.Errorf("%s: removed %v, want %v", n, os.IsNotExist(err), removed)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, tmpBase+strconv.Itoa(dead)+"-file")); err != nil {
		t.Error("a file was removed")
	}
	if !alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
}
