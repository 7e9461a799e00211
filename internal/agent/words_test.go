package agent

import (
	"slices"
	"testing"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   \t\n", nil},
		{"claude", []string{"claude"}},
		{"npx @anthropic-ai/claude-code", []string{"npx", "@anthropic-ai/claude-code"}},
		{"  npx   -y  @anthropic-ai/claude-code@2.1.329 ", []string{"npx", "-y", "@anthropic-ai/claude-code@2.1.329"}},
		{`"/opt/my tools/claude" --debug`, []string{"/opt/my tools/claude", "--debug"}},
		{`'/opt/my tools/claude'`, []string{"/opt/my tools/claude"}},
		{`/opt/my\ tools/claude`, []string{"/opt/my tools/claude"}},
		{`a'b c'd`, []string{"ab cd"}},
		{`'' x ""`, []string{"", "x", ""}},
		{`'it''s'`, []string{"its"}},
		{`'a\b'`, []string{`a\b`}},
		{`"a\b"`, []string{`a\b`}},
		{`"a\"b\\c\$d\` + "`" + `e"`, []string{"a\"b\\c$d`e"}},
		{`"$HOME" ~ *.go`, []string{"$HOME", "~", "*.go"}},
		{"a\\\nb", []string{"ab"}},
		{"\"a\\\nb\"", []string{"ab"}},
		{`\'x`, []string{"'x"}},
		{`"'"`, []string{"'"}},
		{`'"'`, []string{`"`}},
		{"a;b|c", []string{"a;b|c"}},
		{"one\ttwo\r\nthree", []string{"one", "two", "three"}},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSplitWordsErrors(t *testing.T) {
	for _, in := range []string{`"abc`, `'abc`, `abc\`, `a "b 'c`, `'a"`, `"a\"`} {
		if got, err := SplitWords(in); err == nil {
			t.Errorf("SplitWords(%q) = %q, want an error", in, got)
		}
	}
}

func TestJoinWords(t *testing.T) {
	argv := []string{"claude", "--allowedTools", "Bash(git diff *)", "-p", "--", "it's a \"test\"", ""}
	got := JoinWords(argv)
	want := `claude --allowedTools 'Bash(git diff *)' -p -- 'it'\''s a "test"' ''`
	if got != want {
		t.Errorf("JoinWords = %s\nwant       %s", got, want)
	}
	back, err := SplitWords(got)
	if err != nil || !slices.Equal(back, argv) {
		t.Errorf("round trip = %q, %v", back, err)
	}
}

// FuzzSplitWords: splitting never panics, and whatever it splits survives
// a JoinWords/SplitWords round trip.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"npx @anthropic-ai/claude-code", `"a b" 'c d' e\ f`, `"x\"y"`, "a\\\nb", `'`, `\`, "\"\\$\"", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitWords(s)
		if err != nil {
			return
		}
		back, err := SplitWords(JoinWords(words))
		if err != nil || !slices.Equal(back, words) && !(len(back) == 0 && len(words) == 0) {
			t.Fatalf("round trip of %q: %q -> %q -> %q, %v", s, words, JoinWords(words), back, err)
		}
	})
}
