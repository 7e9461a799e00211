package breaker

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestNormalizeError(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"   \t ", ""},
		{"main.go:12:3: undefined: Foo", "main.go:#: undefined: foo"},
		{"--- FAIL: TestX (0.01s)", "--- fail: testx (#)"},
		{"ok  \tpkg\t12ms", "ok pkg #"},
		{"2025-03-01T12:00:00.123Z ERROR db timeout after 1m30s", "# error db timeout after #"},
		{"[2025-03-01 12:00:00] ERROR x", "[#] error x"},
		{"request 3f2b8c1e-9a0d-4e5f-8a7b-1c2d3e4f5a6b failed", "request # failed"},
		{"panic at 0xC000123ABC in goroutine 17", "panic at # in goroutine #"},
		{"commit 9fceb02d0ae598e95dc970b74767f19372d61af8 not found", "commit # not found"},
		{"facade decade: bad", "facade decade: bad"},
		{"open /tmp/go-build3927392/b001/x.go: no such file", "open /tmp/*/b#/x.go: no such file"},
		{"open /tmp/tmp.AbCdEfGhIj/x: denied", "open /tmp/*/x: denied"},
		{"/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/pytest-of-me/x failed", "/var/folders/zz/zyxvpxvq#csfxvn_n#/t/*/x failed"},
		{`C:\Users\me\AppData\Local\Temp\abc123\f.txt locked`, `c:\users\me\appdata\local\temp\*\f.txt locked`},
		{"\x1b[31mError:\x1b[0m build failed", "error: build failed"},
		{"a\x00b\x07c", "a b c"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"listening on :8080, 1,024 KB used, 3.5GB free", "listening on :#, # kb used, # free"},
		{"x  \u00a0 y", "x y"},
		{"line ٣ arabic digit", "line # arabic digit"},
	} {
		if got := NormalizeError(c.in); got != c.want {
			t.Errorf("NormalizeError(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestSignature(t *testing.T) {
	a, na := Signature([]string{"E: x at line 3", "W: y took 5s", "E: x at line 3"})
	b, _ := Signature([]string{"  W: y took 12ms", "", "E: x at line 90"})
	if a == "" || a != b {
		t.Fatalf("order, repeats and numbers must not matter: %q %q", a, b)
	}
	if !slices.Equal(na, []string{"e: x at line #", "w: y took #"}) {
		t.Fatalf("normalised lines %q", na)
	}
	c, _ := Signature([]string{"E: x at line 3"})
	if c == a {
		t.Fatal("a subset is a different set")
	}
	if s, n := Signature([]string{"", " \t"}); s != "" || n != nil {
		t.Fatalf("blank lines: %q %q", s, n)
	}
	if s, _ := Signature(nil); s != "" {
		t.Fatalf("no lines: %q", s)
	}
}

// FuzzNormalizeError checks the properties the same-error rule relies on:
// the result is stable under a second pass, holds no digit, control
// character or surplus white space, is valid UTF-8, and signatures ignore
// order and repeats.
func FuzzNormalizeError(f *testing.F) {
	for _, s := range []string{
		"main.go:12:3: undefined: Foo", "\x1b\x1b[0m[31m", "5#ms", "#m#ms", "/tmp/a/tmp/b",
		"2025-03-01T12:00:00Z", "0x1f 0X1F deadbeef1", "\xff\xfe", "İstanbul K", "1m2.5s",
		`\temp\x`, "/var/folders/a/b/T/c", "ǅ ǈ ß ẞ", "12\u00a034",
	} {
		f.Add(s, "other line 7")
	}
	f.Fuzz(func(t *testing.T, line, other string) {
		n := NormalizeError(line)
		if again := NormalizeError(n); again != n {
			t.Fatalf("not idempotent: %q → %q → %q", line, n, again)
		}
		if !utf8.ValidString(n) {
			t.Fatalf("invalid UTF-8: %q", n)
		}
		if n != strings.TrimSpace(n) || strings.Contains(n, "  ") {
			t.Fatalf("white space left: %q", n)
		}
		for _, r := range n {
			if unicode.IsDigit(r) || unicode.IsControl(r) {
				t.Fatalf("%q left in %q", r, n)
			}
		}
		s1, _ := Signature([]string{line, other, line})
		s2, _ := Signature([]string{other, line})
		if s1 != s2 {
			t.Fatalf("signature depends on order or repeats: %q %q", line, other)
		}
	})
}

func BenchmarkNormalizeError(b *testing.B) {
	line := "2025-03-01T12:00:00Z main.go:12:3: open /tmp/go-build3927392/b001/x.go: undefined: Foo (took 12ms)"
	b.ReportAllocs()
	for b.Loop() {
		NormalizeError(line)
	}
}
