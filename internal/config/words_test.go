package config

import (
	"slices"
	"testing"
)

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
