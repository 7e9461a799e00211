package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/store"
)

var t0 = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

func TestLoad(t *testing.T) {
	mtime := t0.Add(-2 * time.Hour)
	tests := []struct {
		name      string
		content   *string
		want      Session
		missing   bool
		corrupt   bool
		line, col int
	}{
		{name: "missing", missing: true},
		{name: "json", content: ptr(`{"session_id": "abc-123", "timestamp": "2025-01-02T15:04:05Z"}`),
			want: Session{ID: "abc-123", CreatedAt: t0}},
		{name: "json with offset and created_at", content: ptr(`{"session_id": "x", "created_at": "2025-01-02T16:04:05+01:00"}`),
			want: Session{ID: "x", CreatedAt: t0}},
		{name: "json without a time", content: ptr(`{"session_id": "x"}`), want: Session{ID: "x"}},
		{name: "legacy bare id", content: ptr("abc-123\n"), want: Session{ID: "abc-123", CreatedAt: mtime, Legacy: true}},
		{name: "legacy with CR and blank lines", content: ptr("\r\n\n  abc-123\r\nrest\n"),
			want: Session{ID: "abc-123", CreatedAt: mtime, Legacy: true}},
		{name: "legacy null", content: ptr("null\n"), want: Session{Legacy: true}},
		{name: "empty", content: ptr(""), corrupt: true, line: 1, col: 1},
		{name: "torn json", content: ptr("{\"session_id\": \"abc"), corrupt: true, line: 1, col: 19},
		{name: "json without session_id", content: ptr(`{"id": "x"}`), corrupt: true},
		{name: "bad timestamp", content: ptr(`{"session_id": "x", "timestamp": "yesterday"}`), corrupt: true},
		{name: "words are not an id", content: ptr("\nnot a session\n"), corrupt: true, line: 2, col: 1},
		{name: "control character in json id", content: ptr(`{"session_id": "a\u0007b"}`), corrupt: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), ".claude_session_id")
			if tt.content != nil {
				if err := os.WriteFile(p, []byte(*tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, mtime, mtime); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Load(p)
			if errors.Is(err, fs.ErrNotExist) != tt.missing {
				t.Fatalf("err = %v, missing %v", err, tt.missing)
			}
			var ce *store.CorruptError
			if errors.As(err, &ce) != tt.corrupt {
				t.Fatalf("err = %v, corrupt %v", err, tt.corrupt)
			}
			if tt.corrupt {
				if ce.Path != p || (tt.line > 0 && (ce.Line != tt.line || ce.Col != tt.col)) {
					t.Errorf("corrupt at %s:%d:%d, want line %d col %d", ce.Path, ce.Line, ce.Col, tt.line, tt.col)
				}
				return
			}
			if !tt.missing && (!got.CreatedAt.Equal(tt.want.CreatedAt) || got.ID != tt.want.ID || got.Legacy != tt.want.Legacy) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSave(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".claude_session_id")
	s := Session{ID: "abc-123", CreatedAt: t0}
	if err := Save(p, s); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil || got.ID != s.ID || !got.CreatedAt.Equal(t0) || got.Legacy {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for name, bad := range map[string]Session{
		"no id": {CreatedAt: t0}, "no time": {ID: "x"}, "space in id": {ID: "a b", CreatedAt: t0},
	} {
		if err := Save(p, bad); err == nil {
			t.Errorf("%s: saved", name)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestCheckID(t *testing.T) {
	for id, ok := range map[string]bool{
		"8f4c2a9e-1b7d-4c3a-9e2f-0a1b2c3d4e5f": true, // Claude Code, Codex, Gemini
		"ses_7c1f2a3b4d5e6f708192a3b4":         true, // OpenCode
		"sess-1":                               true,
		"--model=evil":                         false,
		"-p":                                   false,
		"a b":                                  false,
		"id\x1b]0;t\x07":                       false,
		"ok;rm":                                false,
		"":                                     false,
		strings.Repeat("a", maxIDLen+1):        false,
	} {
		if err := checkID(id); (err == nil) != ok {
			t.Errorf("checkID(%q) = %v, want ok %v", id, err, ok)
		}
	}
}
