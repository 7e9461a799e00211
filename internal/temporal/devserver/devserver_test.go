package devserver

import (
	"os"
	"path/filepath"
	"testing"
)

// The dev server the tests start (and docs/temporal.md shows) keeps its
// SQLite file with a write-ahead log: its header says so (bytes 18 and 19
// are 2 in WAL mode, 1 with the rollback journal the CLI uses by itself).
func TestDevServerWritesAhead(t *testing.T) {
	db := filepath.Join(t.TempDir(), "temporal.db")
	Start(t, db)
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 100 || string(b[:16]) != "SQLite format 3\x00" {
		t.Fatalf("%s is not an SQLite database", db)
	}
	if b[18] != 2 || b[19] != 2 {
		t.Errorf("%s: header's write/read versions are %d/%d, want 2/2 (a write-ahead log)", db, b[18], b[19])
	}
}
