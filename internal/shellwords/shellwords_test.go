package shellwords

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"claude", []string{"claude"}},
		{"  npx   -y  @anthropic-ai/claude-code@2.1.329\t--verbose ", []string{"npx", "-y", "@anthropic-ai/claude-code@2.1.329", "--verbose"}},
		{"one\ttwo\r\nthree", []string{"one", "two", "three"}},
		{`"/opt/my tools/claude" --debug`, []string{"/opt/my tools/claude", "--debug"}},
		{`'/opt/my tools/claude'`, []string{"/opt/my tools/claude"}},
		{`/opt/my\ tools/claude`, []string{"/opt/my tools/claude"}},
		{`claude --append-system-prompt 'be brief; no $ signs | ever'`, []string{"claude", "--append-system-prompt", "be brief; no $ signs | ever"}},
		{`claude --x "a \"b\" \\ \$HOME \n"`, []string{"claude", "--x", `a "b" \ $HOME \n`}},
		{`claude "a\b" 'a\b'`, []string{"claude", `a\b`, `a\b`}},
		{`claude "a;b|c"`, []string{"claude", "a;b|c"}},
		{`a'b c'd`, []string{"ab cd"}},
		{`a'b'"c"d`, []string{"abcd"}},
		{`'it''s'`, []string{"its"}},
		{`claude '' x ""`, []string{"claude", "", "x", ""}},
		{`\'x "'" '"'`, []string{"'x", "'", `"`}},
		{"claude \\\n  --x", []string{"claude", "--x"}},
		{"\"a\\\nb\"", []string{"ab"}},
		{"claude # a note", []string{"claude"}},
		{"claude a#b", []string{"claude", "a#b"}},
		{"claude ~ *.go", []string{"claude", "~", "*.go"}},
		{"cost $5 $ $-x", []string{"cost", "$5", "$", "$-x"}},
		{"env ANTHROPIC_BASE_URL=http://x claude", []string{"env", "ANTHROPIC_BASE_URL=http://x", "claude"}},
		{"claude --model=opus", []string{"claude", "--model=opus"}},
		{"'A=b' c", []string{"A=b", "c"}},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSplitRefuses(t *testing.T) {
	const exp = "shell expansion ($..., `...`) is not supported (no shell runs the agent command)"
	tests := []struct{ in, want string }{
		{"", "empty command"},
		{" \t\n", "empty command"},
		{"   # only a comment", "empty command"},
		{`"" --x`, "empty command name"},
		{`claude 'x`, "unterminated single quote"},
		{`claude "x`, "unterminated double quote"},
		{`a "b 'c`, "unterminated double quote"},
		{`"a\"`, "unterminated double quote"},
		{`claude \`, "trailing backslash"},
		{"claude | tee log", `shell operator '|' is not supported (no shell runs the agent command)`},
		{"claude; rm -rf /", `shell operator ';' is not supported (no shell runs the agent command)`},
		{"cd x && claude", `shell operator '&' is not supported (no shell runs the agent command)`},
		{"claude > out", `shell operator '>' is not supported (no shell runs the agent command)`},
		{"claude < in", `shell operator '<' is not supported (no shell runs the agent command)`},
		{"(claude)", `shell operator '(' is not supported (no shell runs the agent command)`},
		{"claude $(cat args)", exp},
		{"claude $x", exp},
		{`claude "$HOME"`, exp},
		{"claude ${X}", exp},
		{"claude `id`", exp},
		{"claude \"`id`\"", exp},
		{"FOO=1 claude", "environment assignments before the command are not supported (use: env NAME=value cmd)"},
		{"  ANTHROPIC_MODEL= claude", "environment assignments before the command are not supported (use: env NAME=value cmd)"},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Split(%q) = %q, %v; want error %q", tt.in, got, err, tt.want)
		}
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"claude", "--allowedTools", "Bash(git diff *)", "-p", "--", "it's a \"test\"", ""},
			`claude --allowedTools 'Bash(git diff *)' -p -- 'it'\''s a "test"' ''`},
		{[]string{"claude", "--model=opus", "#x", "$HOME"}, `claude --model=opus '#x' '$HOME'`},
		{[]string{"A=b", "c=d"}, `'A=b' c=d`},
	}
	for _, tt := range tests {
		got := Join(tt.argv)
		if got != tt.want {
			t.Errorf("Join(%q) = %s, want %s", tt.argv, got, tt.want)
		}
		if back, err := Split(got); err != nil || !slices.Equal(back, tt.argv) {
			t.Errorf("Split(Join(%q)) = %q, %v", tt.argv, back, err)
		}
	}
}

// FuzzSplit: splitting never panics, a split command has a first word, and
// whatever splits survives a Join/Split round trip.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"npx @anthropic-ai/claude-code", `"a b" 'c d' e\ f`, `"x\"y"`, "a\\\nb",
		`'`, `\`, "\"\\$\"", "", "claude # x", "A=1 b", "'A=1' b", "a|b", "$x", "cost $5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil {
			return
		}
		if len(words) == 0 || words[0] == "" {
			t.Fatalf("Split(%q) = %q without an error", s, words)
		}
		back, err := Split(Join(words))
		if err != nil || !slices.Equal(back, words) {
			t.Fatalf("round trip of %q: %q -> %s -> %q, %v", s, words, Join(words), back, err)
		}
	})
}
