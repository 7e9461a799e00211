package trust

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTrustLifecycle(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "cfg", "trusted.json")}
	proj := t.TempDir()
	rc := filepath.Join(proj, ".ralphrc")
	v1, v2 := []byte("AGENT_CMD=./a\n"), []byte("AGENT_CMD=./b\n")
	steps := []struct {
		do      func() error
		content []byte
		want    bool
	}{
		{nil, v1, false}, // nothing recorded yet
		{func() error { _, err := s.Trust(rc, v1, time.Now()); return err }, v1, true},
		{nil, v2, false}, // a changed .ralphrc needs trust again
		{func() error { _, err := s.Trust(rc, v2, time.Now()); return err }, v2, true},
		{nil, v1, false}, // the old content is no longer trusted
		{func() error { _, err := s.Revoke(rc); return err }, v2, false},
	}
	for i, st := range steps {
		if st.do != nil {
			if err := st.do(); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		got, err := s.Trusted(rc, st.content)
		if err != nil || got != st.want {
			t.Fatalf("step %d: Trusted = %v, %v; want %v", i, got, err, st.want)
		}
	}
	// Another project with the same content is not trusted by this one.
	other := filepath.Join(t.TempDir(), ".ralphrc")
	if _, err := s.Trust(rc, v1, time.Now()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Trusted(other, v1); ok {
		t.Fatal("trust leaked to another path")
	}
	// A path reached through a link is the same project.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Trusted(filepath.Join(link, ".ralphrc"), v1); !ok {
		t.Fatal("the project through a link is not trusted")
	}
	if info, err := os.Stat(s.Path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("record: %v %v", info, err)
	}
}

func TestCorruptRecord(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trusted.json")
	if err := os.WriteFile(p, []byte("[{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Store{Path: p}).Trusted("/x/.ralphrc", nil); err == nil {
		t.Fatal("a corrupt record must be an error, never trust")
	}
}
