package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"ralph/internal/config"
	"ralph/internal/store"
)

// Every flag the key table (and so the .ralphrc template `ralph enable`
// writes) names exists on `ralph run` and sets that key.
func TestKeyTableFlagsExist(t *testing.T) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	rf := addRunFlags(fs)
	for _, k := range config.Describe() {
		if k.Flag == "" {
			continue
		}
		f := fs.Lookup(k.Flag[2:])
		if f == nil {
			t.Errorf("%s names the flag %s, which ralph run does not have", k.Name, k.Flag)
			continue
		}
		if rf.keyed[f.Name] != k.Name {
			t.Errorf("%s sets %s, not %s", k.Flag, rf.keyed[f.Name], k.Name)
		}
	}
}

// PROJECT_NAME titles the dashboard; unset, the directory's name does.
func TestProjectTitle(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := projectTitle(st); got != filepath.Base(dir) {
		t.Errorf("unset: %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ralphrc"), []byte("PROJECT_NAME=\"Web shop\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := projectTitle(st); got != "Web shop" {
		t.Errorf("PROJECT_NAME: %q", got)
	}
}
