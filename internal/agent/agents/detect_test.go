package agents

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBin writes shell scripts named like the agents into a directory and
// returns a lookPath over it.
func fakeBin(t *testing.T, scripts map[string]string) func(string) (string, error) {
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return func(name string) (string, error) {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", exec.ErrNotFound
		}
		return p, nil
	}
}

func TestDetect(t *testing.T) {
	look := fakeBin(t, map[string]string{
		// What the real CLIs print.
		"claude": `[ "$1" = --version ] && echo "2.1.329 (Claude Code)"`,
		"codex":  `echo 'WARNING: proceeding, even though we could not create PATH aliases' >&2; echo "codex-cli 0.169.0"`,
		// Reads stdin: must get EOF at once, not hang.
		"gemini": `cat >/dev/null; echo 0.61.0`,
		// No opencode installed.
	})
	start := time.Now()
	found := Detect(context.Background(), look)
	if d := time.Since(start); d > DetectTimeout {
		t.Errorf("took %v", d)
	}
	want := []struct{ name, version, err string }{
		{"claude", "2.1.329", ""},
		{"codex", "0.169.0", ""},
		{"gemini", "0.61.0", ""},
		{"opencode", "", "opencode not found"},
	}
	if len(found) != len(want) {
		t.Fatalf("found %+v", found)
	}
	for i, w := range want {
		f := found[i]
		if f.Name != w.name || f.Command != w.name || f.Version != w.version {
			t.Errorf("%d: %+v, want %+v", i, f, w)
		}
		if w.err == "" && (f.Err != nil || !strings.HasSuffix(f.Path, "/"+w.name)) {
			t.Errorf("%s: path %q, err %v", w.name, f.Path, f.Err)
		}
		if w.err != "" && (f.Err == nil || !strings.Contains(f.Err.Error(), w.err) || !errors.Is(f.Err, exec.ErrNotFound)) {
			t.Errorf("%s: err %v, want %q", w.name, f.Err, w.err)
		}
	}
}

func TestDetectFailures(t *testing.T) {
	look := fakeBin(t, map[string]string{
		"claude":   `echo "Please log in" >&2; exit 1`,
		"codex":    `echo "no version here"`,
		"gemini":   `sleep 30`,
		"opencode": `echo 1.18.33`,
	})
	// The context cuts the hanging one short; the others are quick.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	found := Detect(ctx, look)
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("took %v", d)
	}
	wantErr := map[string]string{"claude": "Please log in", "codex": "no version number", "gemini": "did not answer"}
	for _, f := range found {
		w, bad := wantErr[f.Name]
		switch {
		case bad && (f.Err == nil || !strings.Contains(f.Err.Error(), w) || f.Version != ""):
			t.Errorf("%s: version %q, err %v, want %q", f.Name, f.Version, f.Err, w)
		case !bad && (f.Err != nil || f.Version != "1.18.33"):
			t.Errorf("%s: version %q, err %v", f.Name, f.Version, f.Err)
		}
	}
}

func TestVersionPattern(t *testing.T) {
	for out, want := range map[string]string{
		"2.1.329 (Claude Code)": "2.1.329", "codex-cli 0.169.0": "0.169.0", "0.61.0\n": "0.61.0",
		"opencode 1.18.33-beta.2": "1.18.33-beta.2", "v1.2": "", "version 3.4": "3.4",
	} {
		if got := version.FindString(out); got != want {
			t.Errorf("%q: %q, want %q", out, got, want)
		}
	}
}
