package demo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkspaceStaysInside(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	ws, err := openWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	write := func(path string) error {
		in, _ := json.Marshal(map[string]string{"file_path": path, "content": "x"})
		_, err := ws.run("Write", in)
		return err
	}
	for _, ok := range []string{"a.txt", "sub/dir/b.txt", filepath.Join(dir, "c.txt"), "sub/../d.txt"} {
		if err := write(ok); err != nil {
			t.Errorf("Write %s: %v", ok, err)
		}
	}
	for _, bad := range []string{"../x.txt", filepath.Join(outside, "x.txt"), "link/x.txt", "sub/../../x.txt", ""} {
		if err := write(bad); err == nil {
			t.Errorf("Write %q was allowed", bad)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("wrote outside: %v", entries)
	}
	for name, want := range map[string]string{"a.txt": "x", "sub/dir/b.txt": "x", "c.txt": "x", "d.txt": "x"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
}

func TestWorkspaceTools(t *testing.T) {
	dir := t.TempDir()
	ws, err := openWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	run := func(tool string, in map[string]any) (string, error) {
		b, _ := json.Marshal(in)
		return ws.run(tool, b)
	}
	steps := []struct {
		tool string
		in   map[string]any
		want string // prefix of the result, or of the error
	}{
		{"Read", map[string]any{"file_path": "f.txt"}, "file does not exist"},
		{"Write", map[string]any{"file_path": "f.txt", "content": "one\ntwo\ntwo\n"}, "File created successfully at: f.txt"},
		{"Write", map[string]any{"file_path": "f.txt", "content": "one\ntwo\ntwo\n"}, "The file f.txt has been updated."},
		{"Read", map[string]any{"file_path": "f.txt"}, "1\tone\n2\ttwo\n3\ttwo\n"},
		{"Read", map[string]any{"file_path": "f.txt", "offset": 2, "limit": 1}, "2\ttwo\n"},
		{"Edit", map[string]any{"file_path": "f.txt", "old_string": "two", "new_string": "2"}, "found 2 matches"},
		{"Edit", map[string]any{"file_path": "f.txt", "old_string": "two", "new_string": "2", "replace_all": true}, "The file f.txt has been updated successfully."},
		{"Edit", map[string]any{"file_path": "f.txt", "old_string": "one", "new_string": "one"}, "old_string and new_string are the same"},
		{"Edit", map[string]any{"file_path": "f.txt", "old_string": "", "new_string": "x"}, "old_string is empty"},
		{"Read", map[string]any{"file_path": "f.txt"}, "1\tone\n2\t2\n3\t2\n"},
	}
	for i, s := range steps {
		got, err := run(s.tool, s.in)
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, s.want) {
			t.Errorf("step %d %s %v = %q, want %q", i, s.tool, s.in, got, s.want)
		}
	}
}
