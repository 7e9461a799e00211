package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ralph/internal/store"
)

// GitignoreEntries are ralph's state files, which belong to one machine's
// run and never to the repository. Everything else in .ralph/ (the prompt,
// plan, agent notes and specs) is meant to be committed.
var GitignoreEntries = []string{
	".ralph/logs/",
	".ralph/status.json",
	".ralph/.circuit_breaker_state",
	".ralph/.rate_limit_state",
	".ralph/.loop_state",
	".ralph/.claude_session_id",
	".ralph/.ralph_session",
	".ralph/.ralph_session_history",
	".ralph/ralph.lock",
	".ralph/.control",
	".ralph/.agent_groups",
	".ralph/*.corrupt-*",
	".ralph/.*.tmp-*",
	".ralph/clarification.md",
}

const gitignoreHeader = "# ralph: per-machine loop state (logs, counters, sessions, lock)"

// MergeGitignore returns existing with the entries it lacks appended under a
// header, and the entries added. Lines are compared without a leading or
// trailing slash, so "/.ralph/logs" counts as ".ralph/logs/". Nothing already
// in the file is changed or reordered.
func MergeGitignore(existing []byte, entries []string) ([]byte, []string) {
	have := map[string]bool{}
	for l := range strings.Lines(string(existing)) {
		have[normIgnore(l)] = true
	}
	var added []string
	for _, e := range entries {
		if !have[normIgnore(e)] {
			added = append(added, e)
			have[normIgnore(e)] = true
		}
	}
	if len(added) == 0 {
		return existing, nil
	}
	var b bytes.Buffer
	b.Write(existing)
	if len(existing) > 0 {
		if existing[len(existing)-1] != '\n' {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	b.WriteString(gitignoreHeader + "\n")
	for _, e := range added {
		b.WriteString(e + "\n")
	}
	return b.Bytes(), added
}

func normIgnore(l string) string {
	return strings.Trim(strings.TrimSpace(l), "/")
}

// writer writes files under root and records what it did, for the report.
// Paths in the lists are relative to root, with forward slashes.
type writer struct {
	root    string
	force   bool
	created []string
	updated []string
	skipped []string
	notes   []string // why files were skipped, for the warnings
}

func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

// put writes a file that ralph owns: a new one always, an existing one only
// with force.
func (w *writer) put(rel string, data []byte) error {
	path := filepath.Join(w.root, filepath.FromSlash(rel))
	ok, err := exists(path)
	if err != nil {
		return err
	}
	if ok && !w.force {
		w.skipped = append(w.skipped, rel)
		return nil
	}
	if err := write(path, data); err != nil {
		return err
	}
	if ok {
		w.updated = append(w.updated, rel)
	} else {
		w.created = append(w.created, rel)
	}
	return nil
}

// keep writes a file that belongs to the user once written (a README): it is
// created when missing and never replaced, whatever force says.
func (w *writer) keep(rel string, data []byte) error {
	path := filepath.Join(w.root, filepath.FromSlash(rel))
	ok, err := exists(path)
	if err != nil {
		return err
	}
	if ok {
		w.skipped = append(w.skipped, rel)
		w.notes = append(w.notes, rel+" exists and is never replaced")
		return nil
	}
	if err := write(path, data); err != nil {
		return err
	}
	w.created = append(w.created, rel)
	return nil
}

// gitignore appends the missing ralph entries to .gitignore, creating it if
// needed. It reports the file as created, updated, or not at all when every
// entry is already there.
func (w *writer) gitignore() error {
	path := filepath.Join(w.root, ".gitignore")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read .gitignore: %w", err)
	}
	missing := errors.Is(err, fs.ErrNotExist)
	data, added := MergeGitignore(old, GitignoreEntries)
	if len(added) == 0 {
		return nil
	}
	if err := write(path, data); err != nil {
		return err
	}
	if missing {
		w.created = append(w.created, ".gitignore")
	} else {
		w.updated = append(w.updated, ".gitignore")
	}
	return nil
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return store.WriteFileAtomic(path, data, 0o644)
}
