package config

import (
	"slices"
	"testing"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"claude", []string{"claude"}},
		{"  npx   @anthropic-ai/claude-code\t--verbose ", []string{"npx", "@anthropic-ai/claude-code", "--verbose"}},
		{`claude --append-system-prompt 'be brief; no $ signs'`, []string{"claude", "--append-system-prompt", "be brief; no $ signs"}},
		{`claude --x "a \"b\" \\ \$HOME \n"`, []string{"claude", "--x", `a "b" \ $HOME \n`}},
		{`/opt/my\ tools/claude`, []string{"/opt/my tools/claude"}},
		{`a'b'"c"d`, []string{"abcd"}},
		{`claude ''`, []string{"claude", ""}},
		{"claude \\\n  --x", []string{"claude", "--x"}},
		{"claude # a comment", []string{"claude"}},
		{"claude a#b", []string{"claude", "a#b"}},
		{"env ANTHROPIC_BASE_URL=http://x claude", []string{"env", "ANTHROPIC_BASE_URL=http://x", "claude"}},
		{"claude --model=opus", []string{"claude", "--model=opus"}},
		{"cost $5", []string{"cost", "$5"}},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSplitWordsErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "empty command"},
		{"   # only a comment", "empty command"},
		{`"" --x`, "empty command name"},
		{`claude 'x`, "unterminated single quote"},
		{`claude "x`, "unterminated double quote"},
		{`claude \`, "trailing backslash"},
		{"claude | tee log", `shell operator '|' is not supported (no shell runs the agent command)`},
		{"claude; rm -rf /", `shell operator ';' is not supported (no shell runs the agent command)`},
		{"claude > out", `shell operator '>' is not supported (no shell runs the agent command)`},
		{"(claude)", `shell operator '(' is not supported (no shell runs the agent command)`},
		{"claude $(cat args)", "shell expansion ($..., `...`) is not supported (no shell runs the agent command)"},
		{`claude "$HOME"`, "shell expansion ($..., `...`) is not supported (no shell runs the agent command)"},
		{"claude ${X}", "shell expansion ($..., `...`) is not supported (no shell runs the agent command)"},
		{"claude `id`", "shell expansion ($..., `...`) is not supported (no shell runs the agent command)"},
		{"ANTHROPIC_MODEL=x claude", "environment assignments before the command are not supported (use: env NAME=value cmd)"},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("SplitWords(%q) = %q, %v; want error %q", tt.in, got, err, tt.want)
		}
	}
}

func TestAgentArgv(t *testing.T) {
	cfg := Defaults()
	cfg.AgentCmd = `npx @anthropic-ai/claude-code --settings "my settings.json"`
	got, err := cfg.AgentArgv()
	if err != nil || !slices.Equal(got, []string{"npx", "@anthropic-ai/claude-code", "--settings", "my settings.json"}) {
		t.Errorf("AgentArgv = %q, %v", got, err)
	}
}

func TestSplitList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"", []string{}, ""},
		{" , ,", []string{}, ""},
		{"Write,Read", []string{"Write", "Read"}, ""},
		{"Bash(git log:*), Read ,Bash(npm run a,b)", []string{"Bash(git log:*)", "Read", "Bash(npm run a,b)"}, ""},
		{"Bash(x(y,z)),W", []string{"Bash(x(y,z))", "W"}, ""},
		{"Future Enhancements, Nice to Have", []string{"Future Enhancements", "Nice to Have"}, ""},
		{"Bash(git log", nil, "unbalanced '('"},
		{"Read),W", nil, "unbalanced ')'"},
	}
	for _, tt := range tests {
		got, err := SplitList(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("SplitList(%q) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitList(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestQuoteValueRoundTrips(t *testing.T) {
	for _, v := range []string{"", "plain", "a b", "it's", `$(rm -rf /)`, "`x`", `back\slash`, "#hash", "~/x",
		"Bash(git log *)", `"dq"`, "a;b", "ünïcödé", "x=y", DefaultAllowedTools} {
		line := FormatAssignment("PROJECT_NAME", v)
		values, warns, err := ParseRalphrc(".ralphrc", []byte(line))
		if err != nil || len(warns) != 0 || values["PROJECT_NAME"].Value != v {
			t.Errorf("%q -> %s -> %q (warns %v, err %v)", v, line, values["PROJECT_NAME"].Value, warns, err)
		}
	}
	if got := QuoteValue("Write,Read"); got != "Write,Read" {
		t.Errorf("safe value quoted: %s", got)
	}
}
