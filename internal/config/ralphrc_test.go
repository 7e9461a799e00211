package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseText parses src as ".ralphrc" with env as the environment and returns
// the values by key (secrets included) and the rendered warnings.
func parseText(t *testing.T, src string, env map[string]string) (map[string]string, []string) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	values, warns, err := ParseRalphrcEnv(".ralphrc", []byte(src), lookup)
	if err != nil {
		t.Fatalf("ParseRalphrcEnv: %v", err)
	}
	got := map[string]string{}
	for k, e := range values {
		if e.Key != k {
			t.Errorf("entry %s has Key %s", k, e.Key)
		}
		got[k] = e.Value
	}
	var ws []string
	for _, w := range warns {
		ws = append(ws, w.String())
	}
	return got, ws
}

func TestParseSyntax(t *testing.T) {
	home := map[string]string{"HOME": "/home/u", "USER_MODEL": "opus"}
	tests := []struct {
		name string
		src  string
		env  map[string]string
		key  string
		want string
	}{
		{"bare", "MAX_CALLS_PER_HOUR=50", nil, "MAX_CALLS_PER_HOUR", "50"},
		{"export", "export MAX_CALLS_PER_HOUR=50", nil, "MAX_CALLS_PER_HOUR", "50"},
		{"export with tab and indent", "  export\tCLAUDE_MODEL=x", nil, "CLAUDE_MODEL", "x"},
		{"double quotes keep spaces", `PROJECT_NAME="my project"`, nil, "PROJECT_NAME", "my project"},
		{"single quotes are literal", `PROJECT_NAME='$HOME \n $(x)'`, home, "PROJECT_NAME", `$HOME \n $(x)`},
		{"double-quote escapes", `PROJECT_NAME="a \"b\" \\ \$HOME \n \x"`, home, "PROJECT_NAME", `a "b" \ $HOME \n \x`},
		{"unquoted backslash", `PROJECT_NAME=a\ b\#c`, nil, "PROJECT_NAME", "a b#c"},
		{"concatenated parts", `PROJECT_NAME='a'"b"c`, nil, "PROJECT_NAME", "abc"},
		{"escaped single quote", `PROJECT_NAME='it'\''s'`, nil, "PROJECT_NAME", "it's"},
		{"trailing comment", "MAX_CALLS_PER_HOUR=50   # per hour", nil, "MAX_CALLS_PER_HOUR", "50"},
		{"comment after quotes", `ALLOWED_TOOLS="Read,Bash(git log *)" # safe`, nil, "ALLOWED_TOOLS", "Read,Bash(git log *)"},
		{"hash inside a word", "PROJECT_NAME=a#b", nil, "PROJECT_NAME", "a#b"},
		{"hash starting the value", "PROJECT_NAME=#b", nil, "PROJECT_NAME", "#b"},
		{"semicolon ends", "MAX_CALLS_PER_HOUR=50; # x", nil, "MAX_CALLS_PER_HOUR", "50"},
		{"empty", "CLAUDE_MODEL=", nil, "CLAUDE_MODEL", ""},
		{"empty quoted", `CLAUDE_MODEL="" # none`, nil, "CLAUDE_MODEL", ""},
		{"CRLF", "A=1\r\nMAX_CALLS_PER_HOUR=7\r\n", nil, "MAX_CALLS_PER_HOUR", "7"},
		{"BOM", "\xef\xbb\xbfMAX_CALLS_PER_HOUR=7", nil, "MAX_CALLS_PER_HOUR", "7"},
		{"comments and blanks", "# c\n\n   \n\t# d\nMAX_CALLS_PER_HOUR=8\n", nil, "MAX_CALLS_PER_HOUR", "8"},
		{"alias is canonicalised", `CLAUDE_ALLOWED_TOOLS="Read"`, nil, "ALLOWED_TOOLS", "Read"},
		{"old template default", `PROJECT_NAME="${PROJECT_NAME:-my-project}"`, nil, "PROJECT_NAME", "my-project"},
		{"default from env", `PROJECT_NAME="${PROJECT_NAME:-my-project}"`, map[string]string{"PROJECT_NAME": "env"}, "PROJECT_NAME", "env"},
		{":- on empty", `PROJECT_NAME=${E:-d}`, map[string]string{"E": ""}, "PROJECT_NAME", "d"},
		{"- on empty", `PROJECT_NAME=x${E-d}`, map[string]string{"E": ""}, "PROJECT_NAME", "x"},
		{"default with reference", `CLAUDE_MODEL=${M:-$USER_MODEL}`, home, "CLAUDE_MODEL", "opus"},
		{"braced reference", `RALPH_SHELL_INIT_FILE="${HOME}/.zshrc"`, home, "RALPH_SHELL_INIT_FILE", "/home/u/.zshrc"},
		{"bare reference", `RALPH_SHELL_INIT_FILE=$HOME/.zshrc`, home, "RALPH_SHELL_INIT_FILE", "/home/u/.zshrc"},
		{"tilde", `RALPH_SHELL_INIT_FILE=~/.zshrc`, home, "RALPH_SHELL_INIT_FILE", "/home/u/.zshrc"},
		{"quoted tilde stays", `RALPH_SHELL_INIT_FILE="~/.zshrc"`, home, "RALPH_SHELL_INIT_FILE", "~/.zshrc"},
		{"earlier line wins over env", "HOME=/x\nRALPH_SHELL_INIT_FILE=$HOME/rc", home, "RALPH_SHELL_INIT_FILE", "/x/rc"},
		{"dollar without name", `PROJECT_NAME="cost $5 $"`, nil, "PROJECT_NAME", "cost $5 $"},
		{"command substitution kept", `CLAUDE_MODEL="$(rm -rf /)"`, nil, "CLAUDE_MODEL", "$(rm -rf /)"},
		{"backticks kept", "CLAUDE_MODEL=`rm -rf /`", nil, "CLAUDE_MODEL", "`rm -rf /`"},
		{"secret kept", "ANTHROPIC_API_KEY=sk-ant-123", nil, "ANTHROPIC_API_KEY", "sk-ant-123"},
		{"last assignment wins", "MAX_CALLS_PER_HOUR=1\nMAX_CALLS_PER_HOUR=2", nil, "MAX_CALLS_PER_HOUR", "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := parseText(t, tt.src, tt.env)
			v, ok := got[tt.key]
			if !ok {
				t.Fatalf("%s not parsed; got %v", tt.key, got)
			}
			if v != tt.want {
				t.Errorf("%s = %q, want %q", tt.key, v, tt.want)
			}
		})
	}
}

func TestParseWarnings(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // full warnings, in order
		keys int      // how many values survive
	}{
		{"no equals", "MAX_CALLS_PER_HOUR=1\nhello world", []string{
			".ralphrc:2: not a setting: want NAME=value (ignored; .ralphrc is read as data, never run)"}, 1},
		{"shell code", "if [ -f x ]; then X=1; fi", []string{
			".ralphrc:1: not a setting: want NAME=value (ignored; .ralphrc is read as data, never run)"}, 0},
		{"bad key", "\n1X=2\nMAX-CALLS=5", []string{
			`.ralphrc:2: invalid key "1X" (line ignored): use letters, digits and _`,
			`.ralphrc:3: invalid key "MAX-CALLS" (line ignored): use letters, digits and _`}, 0},
		{"append", "ALLOWED_TOOLS+=Read", []string{
			`.ralphrc:1: invalid key "ALLOWED_TOOLS+" (line ignored): use letters, digits and _`}, 0},
		{"missing key", "=5", []string{".ralphrc:1: missing key before '=' (line ignored)"}, 0},
		{"spaces around equals", "MAX_CALLS_PER_HOUR = 5", []string{
			".ralphrc:1: MAX_CALLS_PER_HOUR: spaces around '=' are not allowed (line ignored); write MAX_CALLS_PER_HOUR=value"}, 0},
		{"space after equals", "CLAUDE_MODEL= opus\nCLAUDE_EFFORT=  # empty", []string{
			".ralphrc:1: CLAUDE_MODEL: spaces around '=' are not allowed (line ignored); write CLAUDE_MODEL=value"}, 1},
		{"unterminated double", "\n\nCLAUDE_MODEL=\"opus", []string{".ralphrc:3: CLAUDE_MODEL: unterminated quote (line ignored)"}, 0},
		{"unterminated single", "CLAUDE_MODEL='opus", []string{".ralphrc:1: CLAUDE_MODEL: unterminated quote (line ignored)"}, 0},
		{"text after value", "PROJECT_NAME=my project", []string{
			`.ralphrc:1: PROJECT_NAME: unexpected "project" after the value (line ignored); quote values that contain spaces`}, 0},
		{"command after value", "CLAUDE_MODEL=x && rm -rf /", []string{
			`.ralphrc:1: CLAUDE_MODEL: unexpected "&& rm -rf /" after the value (line ignored); quote values that contain spaces`}, 0},
		{"trailing backslash", `CLAUDE_MODEL=a\`, []string{
			".ralphrc:1: CLAUDE_MODEL: a trailing backslash would continue the line; continuation lines are not supported (line ignored)"}, 0},
		{"control characters", "CLAUDE_MODEL=\"a\x1b[31mb\"", []string{
			".ralphrc:1: CLAUDE_MODEL: value contains control characters (line ignored)"}, 0},
		{"unknown key", "\n\n\n\n\n\nFOO=1", []string{".ralphrc:7: unknown key FOO (ignored)"}, 0},
		{"near miss", "MAX_CALL_PER_HOUR=1", []string{
			".ralphrc:1: unknown key MAX_CALL_PER_HOUR (ignored); did you mean MAX_CALLS_PER_HOUR?"}, 0},
		{"wrong case", "cb_auto_reset=true", []string{
			".ralphrc:1: unknown key cb_auto_reset (ignored); did you mean CB_AUTO_RESET?"}, 0},
		{"duplicate", "ALLOWED_TOOLS=Read\n\nCLAUDE_ALLOWED_TOOLS=Write", []string{
			".ralphrc:3: CLAUDE_ALLOWED_TOOLS overrides ALLOWED_TOOLS from line 1"}, 1},
		{"command substitution", `CLAUDE_MODEL="$(touch x)"`, []string{
			`.ralphrc:1: CLAUDE_MODEL: command substitution "$(touch x)" is not run (.ralphrc is never executed); value kept as written`}, 1},
		{"backticks", "CLAUDE_MODEL=`id`", []string{
			".ralphrc:1: CLAUDE_MODEL: command substitution \"`id`\" is not run (.ralphrc is never executed); value kept as written"}, 1},
		{"arithmetic", `MAX_LOOPS=$((1+2))`, []string{
			`.ralphrc:1: MAX_LOOPS: command substitution "$((1+2))" is not run (.ralphrc is never executed); value kept as written`}, 1},
		{"unset reference", "PROJECT_NAME=$NOPE", []string{
			".ralphrc:1: PROJECT_NAME: $NOPE is not set; it expands to an empty string"}, 1},
		{"unsupported expansion", "PROJECT_NAME=${X:+y}", []string{
			`.ralphrc:1: PROJECT_NAME: unsupported expansion "${X:+y}" kept as written`}, 1},
		{"unterminated brace", `PROJECT_NAME=${X`, []string{`.ralphrc:1: PROJECT_NAME: unterminated ${ (kept as written)`}, 1},
		{"secret", "\nGITHUB_TOKEN=ghp_x", []string{".ralphrc:2: GITHUB_TOKEN looks like a secret: ralph hides it and passes it to the agent, " +
			"but a file in the repository is a risky place for it; prefer the environment"}, 1},
		{"export alone is fine", "export PATH\nexport", nil, 0},
		{"inert keys are silent", "FIX_PLAN_FILE=\"@fix_plan.md\"\nAGENT_FILE=x", nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warns := parseText(t, tt.src, nil)
			if strings.Join(warns, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(tt.want, "\n"))
			}
			if len(got) != tt.keys {
				t.Errorf("%d values survive (%v), want %d", len(got), got, tt.keys)
			}
		})
	}
}

func TestParseKeepsGoingAfterBadLines(t *testing.T) {
	src := "MAX_CALLS_PER_HOUR=\"10\nFOO BAR\nCLAUDE_MODEL=opus\nCB_AUTO_RESET=true # on\n"
	got, warns := parseText(t, src, nil)
	if got["CLAUDE_MODEL"] != "opus" || got["CB_AUTO_RESET"] != "true" || len(got) != 2 {
		t.Errorf("values = %v", got)
	}
	if len(warns) != 2 {
		t.Errorf("warnings = %q", warns)
	}
}

func TestParseNULIsAnError(t *testing.T) {
	_, _, err := ParseRalphrc("proj/.ralphrc", []byte("A=1\nB=\x00"))
	if err == nil || err.Error() != "proj/.ralphrc:2: NUL byte: this is not a text file" {
		t.Errorf("err = %v", err)
	}
}

func TestParseWithoutEnvironmentSeesOnlyTheFile(t *testing.T) {
	t.Setenv("RALPH_TEST_VISIBLE", "leak")
	values, warns, err := ParseRalphrc(".ralphrc", []byte("PROJECT_NAME=${RALPH_TEST_VISIBLE:-none}"))
	if err != nil || values["PROJECT_NAME"].Value != "none" || len(warns) != 0 {
		t.Errorf("values=%v warns=%v err=%v", values, warns, err)
	}
}

// The heart of "parsed, never executed": command substitutions must not run.
func TestParseNeverRunsCommands(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	src := "CLAUDE_MODEL=\"$(touch SOMEFILE)\"\n" +
		"CLAUDE_EFFORT=`touch OTHERFILE`\n" +
		"PROJECT_NAME=$(touch THIRDFILE)\n" +
		"CLAUDE_CODE_CMD='claude'; touch FOURTHFILE\n" +
		"touch FIFTHFILE\n" +
		"PROJECT_TYPE=${X:-$(touch SIXTHFILE)}\n"
	if err := os.WriteFile(".ralphrc", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, warns, err := ReadRalphrc(".ralphrc", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Resolve(Defaults(), rc, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"SOMEFILE", "OTHERFILE", "THIRDFILE", "FOURTHFILE", "FIFTHFILE", "SIXTHFILE"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was created: the .ralphrc was executed", f)
		}
	}
	if got := rc["CLAUDE_MODEL"].Value; got != "$(touch SOMEFILE)" {
		t.Errorf("CLAUDE_MODEL = %q, want the text as written", got)
	}
	if got := rc["CLAUDE_EFFORT"].Value; got != "`touch OTHERFILE`" {
		t.Errorf("CLAUDE_EFFORT = %q", got)
	}
	if len(warns) != 6 {
		t.Errorf("want a warning per substitution and per bad line, got %d: %v", len(warns), warns)
	}
}

func TestReadRalphrc(t *testing.T) {
	dir := t.TempDir()
	l, warns, err := ReadRalphrc(filepath.Join(dir, "missing"), nil)
	if err != nil || len(l) != 0 || warns != nil {
		t.Errorf("missing file: %v %v %v", l, warns, err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, maxRalphrcSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadRalphrc(big, nil); err == nil || !strings.Contains(err.Error(), big) {
		t.Errorf("big file: err = %v", err)
	}
	path := filepath.Join(dir, ".ralphrc")
	if err := os.WriteFile(path, []byte("FOO=1\nMAX_LOOPS=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, warns, err = ReadRalphrc(path, nil)
	if err != nil || l["MAX_LOOPS"].Value != "3" || len(warns) != 1 || !strings.HasPrefix(warns[0].String(), path+":1: ") {
		t.Errorf("got %v %v %v", l, warns, err)
	}
}
