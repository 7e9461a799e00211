package gitx

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every git ralph runs on the host goes through this package: a git run
// elsewhere would miss the scrubbed environment, the hardening and the
// guards. Test helpers (packages named xxxtest) and the measuring scripts
// (scripts/, not part of ralph) set up their fixtures as they like.
func TestNoGitOutsideTheWrapper(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	direct := regexp.MustCompile(`exec\.Command(Context)?\([^)]*"git"`)
	var read int
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); strings.HasPrefix(name, ".") || name == "testdata" || strings.HasSuffix(name, "test") || name == "gitx" ||
				p == filepath.Join(root, "scripts") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		read++
		if loc := direct.FindIndex(b); loc != nil {
			line := 1 + strings.Count(string(b[:loc[0]]), "\n")
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s:%d runs git itself; use package gitx", rel, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if read < 100 {
		t.Fatalf("read %d Go files under %s; is this the repository?", read, root)
	}
}
