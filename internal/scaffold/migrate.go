package scaffold

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"ralph/internal/store"
)

// flatMarkers prove the bash tool's old flat layout. AGENT.md and specs/
// alone are too common in other projects to count.
var flatMarkers = []string{"PROMPT.md", "@fix_plan.md", "fix_plan.md", "@AGENT.md"}

// flatSources are what migrate moves: the first name present of each row.
var flatSources = []struct {
	names []string
	to    string
	dir   bool
}{
	{[]string{"PROMPT.md"}, PromptPath, false},
	{[]string{"@fix_plan.md", "fix_plan.md"}, PlanPath, false},
	{[]string{"@AGENT.md", "AGENT.md"}, AgentPath, false},
	{[]string{"specs"}, ".ralph/specs", true},
}

// oldStateFiles are the bash tool's top-level state files. ralph does not
// read them; migrate names them so the user can delete them.
var oldStateFiles = []string{".call_count", ".last_reset", ".exit_signals", ".response_analysis",
	".circuit_breaker_state", ".circuit_breaker_history", ".claude_session_id", ".ralph_session",
	".ralph_session_history"}

// FlatLayout lists the files of the old flat layout found at the top of dir.
func FlatLayout(dir string) []string {
	var found []string
	for _, m := range flatMarkers {
		if fileExists(filepath.Join(dir, m)) {
			found = append(found, m)
		}
	}
	return found
}

// MigrateOptions describe one `ralph migrate`.
type MigrateOptions struct {
	Dir    string
	Force  bool      // replace files already in .ralph/ (after backing them up)
	DryRun bool      // report what would happen, change nothing
	Now    time.Time // names the backup directory; zero means the current time
}

// Move is one file or directory moved into .ralph/.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// MigrateResult is the report, also printed by `ralph migrate --json`.
type MigrateResult struct {
	Migrated        bool     `json:"migrated"`
	AlreadyMigrated bool     `json:"already_migrated"` // no flat layout, .ralph/ complete
	DryRun          bool     `json:"dry_run"`
	ProjectDir      string   `json:"project_dir"`
	Moves           []Move   `json:"moves"`
	Replaced        []string `json:"replaced"`   // files in .ralph/ replaced under --force (in the backup)
	BackupDir       string   `json:"backup_dir"` // relative to the project (in a dry run: the one it would create)
	Rewritten       []string `json:"rewritten"`  // files whose paths to the old layout were updated
	Warnings        []string `json:"warnings"`
	Error           string   `json:"error,omitempty"`
}

// NewMigrateResult is the empty report, with lists that print as [] in JSON.
func NewMigrateResult(dir string) *MigrateResult {
	return &MigrateResult{ProjectDir: dir, Moves: []Move{}, Replaced: []string{}, Rewritten: []string{}, Warnings: []string{}}
}

// Migrate moves the old flat layout (PROMPT.md, @fix_plan.md, @AGENT.md and
// specs/ at the top level; fix_plan.md and AGENT.md without the @ too) into
// .ralph/, dropping the @. Everything it moves or replaces is first copied to
// a backup directory in the project. It refuses to replace files already in
// .ralph/ unless Force.
func Migrate(_ context.Context, o MigrateOptions) (*MigrateResult, error) {
	dir, err := projectDir(o.Dir, true)
	res := NewMigrateResult(dir)
	res.DryRun = o.DryRun
	if err != nil {
		return res, err
	}
	if len(FlatLayout(dir)) == 0 {
		if allExist(dir, RequiredFiles) {
			res.AlreadyMigrated = true
			return res, nil
		}
		return res, errorf(KindNotFound, nil, "%s has no old flat layout to migrate (looked for %s at the top level)",
			dir, strings.Join(flatMarkers, ", "))
	}
	var conflicts []string
	for _, src := range flatSources {
		from := ""
		for _, n := range src.names {
			path := filepath.Join(dir, n)
			if (src.dir && dirExists(path)) || (!src.dir && fileExists(path)) {
				if from == "" {
					from = n
				} else {
					res.Warnings = append(res.Warnings, fmt.Sprintf("%s left in place: %s is the one moved to %s", n, from, src.to))
				}
			}
		}
		if from == "" {
			continue
		}
		res.Moves = append(res.Moves, Move{From: from, To: src.to})
		if occupied(filepath.Join(dir, filepath.FromSlash(src.to)), src.dir) {
			conflicts = append(conflicts, src.to)
		}
	}
	if len(conflicts) > 0 && !o.Force {
		return res, errorf(KindRefused, nil, "%s already exists: use --force to replace (it is backed up first)",
			strings.Join(conflicts, ", "))
	}
	res.Replaced = append(res.Replaced, conflicts...)
	for _, f := range oldStateFiles {
		if fileExists(filepath.Join(dir, f)) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("old state file %s left at the top level: ralph does not read it; delete it when you no longer need it", f))
		}
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	res.BackupDir = freeName(dir, ".ralph-migrate-backup-"+now.Format("20060102-150405"))
	if o.DryRun {
		return res, nil
	}
	if err := backup(dir, res); err != nil {
		return res, err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		return res, err
	}
	for _, m := range res.Moves {
		to := filepath.Join(dir, filepath.FromSlash(m.To))
		if err := os.RemoveAll(to); err != nil {
			return res, fmt.Errorf("replace %s: %w", m.To, err)
		}
		if err := os.Rename(filepath.Join(dir, m.From), to); err != nil {
			return res, fmt.Errorf("move %s to %s (the backup in %s has everything): %w", m.From, m.To, res.BackupDir, err)
		}
	}
	prompt := filepath.Join(dir, filepath.FromSlash(PromptPath))
	// Read as the loop reads it: a moved PROMPT.md that is a link is left
	// for `ralph run` to refuse, not copied out of its target.
	if b, err := store.ReadIn(dir, prompt, store.MaxPromptSize); err == nil && movedTo(res.Moves, PromptPath) {
		if text, changed := RewriteReferences(string(b)); changed {
			if err := write(prompt, []byte(text)); err != nil {
				return res, err
			}
			res.Rewritten = append(res.Rewritten, PromptPath)
		}
	}
	res.Migrated = true
	return res, nil
}

// occupied: a file exists at path, or a directory with something in it
// (an empty specs/ or one holding only the placeholder is no loss).
func occupied(path string, dir bool) bool {
	if !dir {
		_, err := os.Lstat(path)
		return err == nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		_, lerr := os.Lstat(path)
		return lerr == nil
	}
	for _, e := range entries {
		if e.Name() != ".gitkeep" {
			return true
		}
	}
	return false
}

func movedTo(moves []Move, to string) bool {
	for _, m := range moves {
		if m.To == to {
			return true
		}
	}
	return false
}

// freeName returns name, or name-2, name-3… if it is taken in dir.
func freeName(dir, name string) string {
	candidate := name
	for i := 2; ; i++ {
		if _, err := os.Lstat(filepath.Join(dir, candidate)); errors.Is(err, fs.ErrNotExist) {
			return candidate
		}
		candidate = fmt.Sprintf("%s-%d", name, i)
	}
}

// backup copies every source, and every target it will replace, into the
// backup directory, keeping their paths relative to the project.
func backup(dir string, res *MigrateResult) error {
	root := filepath.Join(dir, res.BackupDir)
	if err := os.Mkdir(root, 0o755); err != nil {
		return fmt.Errorf("create the backup directory: %w", err)
	}
	rels := make([]string, 0, len(res.Moves)+len(res.Replaced))
	for _, m := range res.Moves {
		rels = append(rels, m.From)
	}
	rels = append(rels, res.Replaced...)
	for _, rel := range rels {
		if err := copyTree(filepath.Join(dir, filepath.FromSlash(rel)), filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			return fmt.Errorf("back up %s: %w", rel, err)
		}
	}
	return nil
}

// copyTree copies a file, a symlink (as a link) or a directory tree.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return os.Symlink(link, target)
		case !info.Mode().IsRegular():
			return nil // sockets, devices: nothing a project file would be
		}
		return copyFile(path, target, info.Mode().Perm())
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// refRE finds paths of the flat layout in a prompt: @fix_plan.md,
// fix_plan.md, @AGENT.md, AGENT.md and specs/ not already inside a path.
var refRE = regexp.MustCompile(`(^|[^\w./@-])@?(fix_plan\.md|AGENT\.md|specs/)`)

// RewriteReferences points an old prompt at the files' new places, so the
// agent does not recreate @fix_plan.md at the top level after the move.
func RewriteReferences(text string) (string, bool) {
	out := refRE.ReplaceAllString(text, "${1}.ralph/${2}")
	return out, out != text
}
