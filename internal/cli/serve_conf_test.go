package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSessionsConf(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.conf")
	if s, err := sessionsConf(path); err != nil || s != nil {
		t.Fatalf("missing file: %v %v", s, err)
	}
	os.WriteFile(path, []byte("# the fleet\n\napi=/src/api\n  web = /src/web\n"), 0o644)
	if _, err := sessionsConf(path); err == nil || !strings.Contains(err.Error(), "sessions.conf:4:") {
		t.Fatalf("a name with spaces: %v", err)
	}
	os.WriteFile(path, []byte("# the fleet\n\napi=/src/api\nweb=/src/web\n"), 0o644)
	s, err := sessionsConf(path)
	if err != nil || len(s) != 2 || s[0].Name != "api" || s[1].Dir != "/src/web" {
		t.Fatalf("%v %+v", err, s)
	}
}
