package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

func TestWriteFileAtomic(t *testing.T) {
	tests := []struct {
		name     string
		existing []byte // nil: no file yet
		data     []byte
		perm     fs.FileMode
	}{
		{"new file", nil, []byte("hello\n"), 0o644},
		{"replace", []byte("old content that is longer"), []byte("new"), 0o644},
		{"empty data", []byte("x"), nil, 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "state.json")
			if tt.existing != nil {
				writeFile(t, p, string(tt.existing))
			}
			if err := WriteFileAtomic(p, tt.data, tt.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(got, tt.data) {
				t.Fatalf("content %q, %v; want %q", got, err, tt.data)
			}
			if info, _ := os.Stat(p); runtime.GOOS != "windows" && info.Mode().Perm() != tt.perm {
				t.Errorf("perm %v, want %v", info.Mode().Perm(), tt.perm)
			}
			assertNoTemps(t, dir)
		})
	}
}

func TestWriteFileAtomicMissingDir(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "such", "f")
	if err := WriteFileAtomic(p, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("want an error naming %s, got %v", p, err)
	}
}

func TestReadJSON(t *testing.T) {
	type doc struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	tests := []struct {
		name      string
		content   *string // nil: file missing
		want      doc
		missing   bool
		corrupt   bool
		line, col int
	}{
		{name: "missing", missing: true},
		{name: "valid", content: ptr(`{"a": 1, "b": "x", "unknown": true}`), want: doc{A: 1, B: "x"}},
		{name: "empty", content: ptr(""), corrupt: true, line: 1, col: 1},
		{name: "blank lines", content: ptr("\n\n  \n"), corrupt: true, line: 1, col: 1},
		{name: "truncated", content: ptr(`{"a": 1`), corrupt: true, line: 1, col: 7},
		{name: "truncated after newline", content: ptr("{\n  \"a\": 1,\n"), corrupt: true, line: 2, col: 10},
		{name: "bad token on line 3", content: ptr("{\n  \"a\": 1,\n  \"b\" 2\n}"), corrupt: true, line: 3, col: 7},
		{name: "column counts characters", content: ptr("{\"b\": \"héllo\" x}"), corrupt: true, line: 1, col: 15},
		{name: "trailing data", content: ptr("{\"a\": 1}\ngarbage"), corrupt: true, line: 2, col: 1},
		{name: "two objects", content: ptr(`{"a":1}{}`), corrupt: true, line: 1, col: 8},
		{name: "wrong type", content: ptr(`{"a": "one"}`), corrupt: true, line: 1, col: 11},
		{name: "byte order mark", content: ptr("\ufeff{}"), corrupt: true, line: 1, col: 1},
		{name: "NUL bytes from a crash", content: ptr("\x00\x00\x00\x00"), corrupt: true, line: 1, col: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.json")
			if tt.content != nil {
				writeFile(t, p, *tt.content)
			}
			var got doc
			err := ReadJSON(p, &got)
			if errors.Is(err, fs.ErrNotExist) != tt.missing {
				t.Fatalf("missing = %v, want %v (err %v)", !tt.missing, tt.missing, err)
			}
			var ce *CorruptError
			if errors.As(err, &ce) != tt.corrupt {
				t.Fatalf("corrupt = %v, want %v (err %v)", ce != nil, tt.corrupt, err)
			}
			if tt.corrupt {
				if ce.Path != p || ce.Line != tt.line || ce.Col != tt.col {
					t.Errorf("got %s %d:%d, want %s %d:%d", ce.Path, ce.Line, ce.Col, p, tt.line, tt.col)
				}
				if !strings.HasPrefix(ce.Error(), fmt.Sprintf("%s:%d:%d: ", p, tt.line, tt.col)) {
					t.Errorf("message %q does not start with file:line:col", ce.Error())
				}
				return
			}
			if !tt.missing && (err != nil || got != tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestRecover(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "status.json")
	want := []string{
		p + ".corrupt-20250102T150405Z",
		p + ".corrupt-20250102T150405Z-2",
		p + ".corrupt-20250102T150405Z-3",
	}
	for i, w := range want {
		content := fmt.Sprintf("{broken %d", i)
		writeFile(t, p, content)
		got, err := recoverAt(p, t0.Add(time.Duration(i)*time.Millisecond))
		if err != nil || got != w {
			t.Fatalf("recover %d: %q, %v; want %q", i, got, err, w)
		}
		if b, _ := os.ReadFile(got); string(b) != content {
			t.Errorf("kept copy %q, want %q", b, content)
		}
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("original still there: %v", err)
		}
	}
	if _, err := Recover(filepath.Join(dir, "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("recover of a missing file: %v", err)
	}
}

// A writer killed between creating its temporary file and renaming it
// leaves the temporary behind; the real file must stay readable and the
// next write must succeed. RemoveStaleTemps sweeps only old leftovers.
func TestLeftoverTempFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "status.json")
	if err := WriteJSON(p, map[string]int{"loop_count": 1}); err != nil {
		t.Fatal(err)
	}
	tmp := tempName(p)
	writeFile(t, tmp, `{"loop_count": 2, "trunc`)

	var got map[string]int
	if err := ReadJSON(p, &got); err != nil || got["loop_count"] != 1 {
		t.Fatalf("read after a killed writer: %v, %v", got, err)
	}
	if err := WriteJSON(p, map[string]int{"loop_count": 3}); err != nil {
		t.Fatal(err)
	}
	if err := ReadJSON(p, &got); err != nil || got["loop_count"] != 3 {
		t.Fatalf("read after the next write: %v, %v", got, err)
	}

	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	young := tempName(filepath.Join(dir, "other"))
	writeFile(t, young, "in progress")
	// Names like a temporary's that WriteFileAtomic never makes are a
	// user's, whatever their age.
	var users []string
	for _, name := range []string{".notes.tmp-old", "status.json.tmp-0123456789abcdef", ".x.tmp-0123456789ABCDEF", ".tmp-0123456789abcdef", ".y.tmp-0123456789abcdef0"} {
		users = append(users, filepath.Join(dir, name))
		writeFile(t, users[len(users)-1], "mine")
		if err := os.Chtimes(users[len(users)-1], old, old); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveStaleTemps(dir, 10*time.Minute, time.Now())
	if err != nil || len(removed) != 1 || removed[0] != tmp {
		t.Fatalf("removed %v, %v; want only %s", removed, err, tmp)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a young temporary was removed: %v", err)
	}
	for _, u := range users {
		if _, err := os.Stat(u); err != nil {
			t.Errorf("a user's file was removed: %v", err)
		}
	}
}

// TestKilledWriter kills a process that rewrites a file as fast as it can
// and checks that what is left is one whole version, never a mix.
func TestKilledWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	for round := range 3 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "STORE_HELPER_WRITE="+p)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it get well into its loop of writes before killing it.
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := os.Stat(p); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(20+round*15) * time.Millisecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()

		var doc helperDoc
		if err := ReadJSON(p, &doc); err != nil {
			t.Fatalf("round %d: state unreadable after kill: %v", round, err)
		}
		if len(doc.Fill) != helperFill || strings.Trim(doc.Fill, doc.Fill[:1]) != "" {
			t.Fatalf("round %d: mixed content after kill", round)
		}
	}
}

const helperFill = 256 << 10

type helperDoc struct {
	N    int    `json:"n"`
	Fill string `json:"fill"`
}

// helperWriter is the process TestKilledWriter kills: the test binary run
// again with STORE_HELPER_WRITE (see TestMain). It writes until killed.
func helperWriter(p string) error {
	for i := 0; ; i++ {
		fill := strings.Repeat(string(rune('a'+i%26)), helperFill)
		if err := WriteJSON(p, helperDoc{N: i, Fill: fill}); err != nil {
			return err
		}
	}
}

// FuzzDecodeJSON checks that decoding never panics and that every corrupt
// report points inside the file at the position Position computes.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":`, "{\n\"a\" 1}", "\ufeff", "", "[1,2", `{"a":"\u00e9"}x`, "\n\n\n}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v map[string]any
		err := DecodeJSON("f.json", data, &v)
		if err == nil {
			return
		}
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("not a CorruptError: %v", err)
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		if ce.Line < 1 || ce.Line > lines || ce.Col < 1 {
			t.Fatalf("position %d:%d outside %d lines of %q", ce.Line, ce.Col, lines, data)
		}
		lineText := bytes.Split(data, []byte{'\n'})[ce.Line-1]
		if ce.Col > len([]rune(string(lineText)))+1 {
			t.Fatalf("column %d beyond line %d %q", ce.Col, ce.Line, lineText)
		}
	})
}

func TestPosition(t *testing.T) {
	data := []byte("ab\ncdé\nf")
	tests := []struct {
		offset    int64
		line, col int
	}{
		{0, 1, 1}, {1, 1, 1}, {2, 1, 2}, {3, 1, 3}, {4, 2, 1}, {6, 2, 3}, {8, 2, 4}, {9, 3, 1}, {99, 3, 1}, {-5, 1, 1},
	}
	for _, tt := range tests {
		if l, c := Position(data, tt.offset); l != tt.line || c != tt.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tt.offset, l, c, tt.line, tt.col)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), tempMarker) {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
