package scaffold

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var migrateNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func flatProject(t *testing.T) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"PROMPT.md":    "Read specs/ first. Update @fix_plan.md; build with @AGENT.md.\n",
		"@fix_plan.md": "- [ ] one\n",
		"@AGENT.md":    "go test ./...\n",
		"specs/api.md": "# API\n",
		".call_count":  "3\n",
		"src/main.go":  "package main\n",
		"fix_plan.md":  "an unrelated copy\n",
	})
	return dir
}

func TestMigrateMovesAndBacksUp(t *testing.T) {
	dir := flatProject(t)
	res, err := Migrate(context.Background(), MigrateOptions{Dir: dir, Now: migrateNow})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Migrated || len(res.Moves) != 4 || res.BackupDir != ".ralph-migrate-backup-20260304-050607" {
		t.Fatalf("%+v", res)
	}
	for rel, want := range map[string]string{
		".ralph/fix_plan.md":  "- [ ] one\n",
		".ralph/AGENT.md":     "go test ./...\n",
		".ralph/specs/api.md": "# API\n",
		".ralph/PROMPT.md":    "Read .ralph/specs/ first. Update .ralph/fix_plan.md; build with .ralph/AGENT.md.\n",
		"fix_plan.md":         "an unrelated copy\n",
		// The backup holds the originals, as they were.
		res.BackupDir + "/PROMPT.md":    "Read specs/ first. Update @fix_plan.md; build with @AGENT.md.\n",
		res.BackupDir + "/@fix_plan.md": "- [ ] one\n",
		res.BackupDir + "/specs/api.md": "# API\n",
	} {
		if got := readFile(t, filepath.Join(dir, rel)); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	for _, gone := range []string{"PROMPT.md", "@fix_plan.md", "@AGENT.md", "specs"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still at the top", gone)
		}
	}
	warnings := strings.Join(res.Warnings, "\n")
	if !strings.Contains(warnings, "fix_plan.md left in place") || !strings.Contains(warnings, ".call_count") {
		t.Errorf("warnings:\n%s", warnings)
	}
	if len(res.Rewritten) != 1 {
		t.Errorf("rewritten %v", res.Rewritten)
	}

	// Now it is done: a second run says so and changes nothing. (The
	// unrelated top-level fix_plan.md still counts as the old layout, so
	// remove it first, as the warning suggested.)
	os.Remove(filepath.Join(dir, "fix_plan.md"))
	before := snapshot(t, dir)
	again, err := Migrate(context.Background(), MigrateOptions{Dir: dir, Now: migrateNow})
	if err != nil || !again.AlreadyMigrated || again.Migrated {
		t.Fatalf("%+v %v", again, err)
	}
	sameTree(t, before, snapshot(t, dir))
}

func TestMigrateRefusesToReplace(t *testing.T) {
	dir := flatProject(t)
	writeFiles(t, dir, map[string]string{".ralph/PROMPT.md": "newer prompt\n"})
	before := snapshot(t, dir)
	_, err := Migrate(context.Background(), MigrateOptions{Dir: dir, Now: migrateNow})
	if KindOf(err) != KindRefused || !strings.Contains(err.Error(), ".ralph/PROMPT.md") {
		t.Fatalf("err %v", err)
	}
	sameTree(t, before, snapshot(t, dir))

	res, err := Migrate(context.Background(), MigrateOptions{Dir: dir, Force: true, Now: migrateNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Replaced) != 1 || readFile(t, filepath.Join(dir, res.BackupDir, ".ralph/PROMPT.md")) != "newer prompt\n" {
		t.Fatalf("the replaced file is not in the backup: %+v", res)
	}
	if !strings.HasPrefix(readFile(t, filepath.Join(dir, PromptPath)), "Read .ralph/specs/") {
		t.Error("the old prompt was not moved in")
	}
}

func TestMigrateDryRunChangesNothing(t *testing.T) {
	dir := flatProject(t)
	before := snapshot(t, dir)
	res, err := Migrate(context.Background(), MigrateOptions{Dir: dir, DryRun: true, Now: migrateNow})
	if err != nil || !res.DryRun || res.Migrated || len(res.Moves) != 4 {
		t.Fatalf("%+v %v", res, err)
	}
	sameTree(t, before, snapshot(t, dir))
}

func TestMigrateNothingToDo(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"AGENT.md": "not ralph's", "specs/x.md": "not ralph's either"})
	_, err := Migrate(context.Background(), MigrateOptions{Dir: dir})
	if KindOf(err) != KindNotFound {
		t.Fatalf("err %v", err)
	}
	if _, err := Migrate(context.Background(), MigrateOptions{Dir: filepath.Join(dir, "nope")}); KindOf(err) != KindNotFound {
		t.Fatalf("missing dir: %v", err)
	}
}

func TestMigrateBackupNameIsFree(t *testing.T) {
	dir := flatProject(t)
	writeFiles(t, dir, map[string]string{".ralph-migrate-backup-20260304-050607/x": "earlier"})
	res, err := Migrate(context.Background(), MigrateOptions{Dir: dir, Now: migrateNow})
	if err != nil || res.BackupDir != ".ralph-migrate-backup-20260304-050607-2" {
		t.Fatalf("%+v %v", res, err)
	}
}

// A flat PROMPT.md that is a link out of the project is moved as a link:
// its target is not read into a real .ralph/PROMPT.md (which the loop would
// then send to the agent), nor changed.
func TestMigrateLeavesALinkedPromptALink(t *testing.T) {
	dir := flatProject(t)
	secret := filepath.Join(t.TempDir(), "notes.md")
	const content = "SECRET, and a reference to @fix_plan.md that migrate would rewrite\n"
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	prompt := filepath.Join(dir, "PROMPT.md")
	if err := os.Remove(prompt); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, prompt); err != nil {
		t.Fatal(err)
	}
	if _, err := Migrate(context.Background(), MigrateOptions{Dir: dir, Now: migrateNow}); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(dir, ".ralph", "PROMPT.md")
	if info, err := os.Lstat(moved); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatalf(".ralph/PROMPT.md: %v, %v; want the link, moved", info, err)
	}
	if b, _ := os.ReadFile(secret); string(b) != content {
		t.Errorf("the link's target was changed: %q", b)
	}
}
