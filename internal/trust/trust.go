// Package trust records which .ralphrc files the user has allowed to choose
// the programs ralph runs, as direnv's allow does for .envrc. The record
// lives outside every repository (a repository cannot trust itself), keyed
// by the file's absolute path and the SHA-256 of its content, so an edited
// .ralphrc — a pull that changes AGENT_CMD — needs trust again.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"ralph/internal/store"
)

// FileEnv overrides where the record is kept (tests, shared machines).
const FileEnv = "RALPH_TRUST_FILE"

// Entry is one trusted .ralphrc.
type Entry struct {
	Path    string    `json:"path"`   // absolute, links resolved
	SHA256  string    `json:"sha256"` // of the content trusted
	Trusted time.Time `json:"trusted"`
}

// Store is the record file.
type Store struct{ Path string }

// Default is the record in the user's configuration directory
// (~/.config/ralph/trusted.json on Linux) or $RALPH_TRUST_FILE.
func Default() (Store, error) {
	if p := os.Getenv(FileEnv); p != "" {
		return Store{Path: p}, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return Store{}, fmt.Errorf("trust: no configuration directory to keep trusted files in: %w", err)
	}
	return Store{Path: filepath.Join(dir, "ralph", "trusted.json")}, nil
}

// Key is how a .ralphrc is recorded: its absolute path with links resolved
// (a project reached through two paths is one project) and its hash.
func Key(rcPath string, content []byte) (path, sum string, err error) {
	abs, err := filepath.Abs(rcPath)
	if err != nil {
		return "", "", err
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	h := sha256.Sum256(content)
	return abs, hex.EncodeToString(h[:]), nil
}

// Sum is the SHA-256 of dir's .ralphrc as the record keys it ("" when
// there is none): what a host that ran the file vouches for.
func Sum(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ".ralphrc"))
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// List reads every entry; a missing record is empty.
func (s Store) List() ([]Entry, error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	var es []Entry
	if err := store.DecodeJSON(s.Path, data, &es); err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	return es, nil
}

// Trusted says whether the .ralphrc at rcPath with this content is trusted.
func (s Store) Trusted(rcPath string, content []byte) (bool, error) {
	path, sum, err := Key(rcPath, content)
	if err != nil {
		return false, err
	}
	es, err := s.List()
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(es, func(e Entry) bool { return e.Path == path && e.SHA256 == sum }), nil
}

// Trust records the .ralphrc at rcPath with this content, replacing an
// earlier entry for the same path.
func (s Store) Trust(rcPath string, content []byte, now time.Time) (Entry, error) {
	path, sum, err := Key(rcPath, content)
	if err != nil {
		return Entry{}, err
	}
	es, err := s.List()
	if err != nil {
		return Entry{}, err
	}
	es = slices.DeleteFunc(es, func(e Entry) bool { return e.Path == path })
	e := Entry{Path: path, SHA256: sum, Trusted: now.UTC()}
	return e, s.write(append(es, e))
}

// Revoke forgets the .ralphrc at rcPath; false when it was not recorded.
func (s Store) Revoke(rcPath string) (bool, error) {
	path, _, err := Key(rcPath, nil)
	if err != nil {
		return false, err
	}
	es, err := s.List()
	if err != nil {
		return false, err
	}
	n := len(es)
	es = slices.DeleteFunc(es, func(e Entry) bool { return e.Path == path })
	if len(es) == n {
		return false, nil
	}
	return true, s.write(es)
}

func (s Store) write(es []Entry) error {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	slices.SortFunc(es, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	data, err := json.MarshalIndent(es, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteFileAtomic(s.Path, append(data, '\n'), 0o600)
}
