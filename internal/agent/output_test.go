package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPromptWithContext(t *testing.T) {
	if got := PromptWithContext("task", " \n"); got != "task" {
		t.Errorf("no context: %q", got)
	}
	got := PromptWithContext("- [ ] task\n\n", "[ralph loop 3] fix_plan.md: 2 of 5 tasks open.")
	want := "- [ ] task\n\n<ralph_loop_context>\nContext from the ralph loop that runs this session (not part of the task):\n" +
		"[ralph loop 3] fix_plan.md: 2 of 5 tasks open.\n</ralph_loop_context>\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestArgChecks(t *testing.T) {
	if err := CheckArgs("x", []string{"a", strings.Repeat("b", MaxArgLen)}); err != nil {
		t.Errorf("argument at the limit: %v", err)
	}
	if err := CheckArgs("x", []string{"a", strings.Repeat("b", MaxArgLen+1)}); err == nil || !strings.HasPrefix(err.Error(), "x: an argument of 131072 bytes") {
		t.Errorf("argument over the limit: %v", err)
	}
	for v, ok := range map[string]bool{"gpt-5": true, "a b": true, "-x": false, "--flag": false, "a\nb": false, "a\x00": false} {
		if err := OptionValue("x", "--model", v); (err == nil) != ok {
			t.Errorf("OptionValue(%q) = %v", v, err)
		}
	}
}

func TestCommandWords(t *testing.T) {
	for cmd, want := range map[string][]string{"": {"def"}, "  ": {"def"}, `npx -y 'my pkg'`: {"npx", "-y", "my pkg"}} {
		if got, err := CommandWords("x", cmd, "def"); err != nil || !slices.Equal(got, want) {
			t.Errorf("CommandWords(%q) = %q, %v", cmd, got, err)
		}
	}
	if _, err := CommandWords("x", `"open`, "def"); err == nil || !strings.Contains(err.Error(), `x: command "\"open"`) {
		t.Errorf("unbalanced: %v", err)
	}
}

func TestOutputFormat(t *testing.T) {
	tests := []struct {
		format string
		live   bool
		want   string
	}{
		{"", false, "json"}, {"", true, "stream-json"}, {"json", true, "stream-json"},
		{"stream-json", false, "stream-json"}, {"text", true, "text"},
	}
	for _, tt := range tests {
		if got, err := OutputFormat("x", Invocation{OutputFormat: tt.format, Live: tt.live}); err != nil || got != tt.want {
			t.Errorf("%q live %v: %q, %v", tt.format, tt.live, got, err)
		}
	}
	if _, err := OutputFormat("x", Invocation{OutputFormat: "yaml"}); err == nil {
		t.Error("yaml accepted")
	}
}

func TestReadTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for max, want := range map[int64]string{4: "6789", 10: "0123456789", 100: "0123456789"} {
		if got, err := ReadTail(path, max); err != nil || string(got) != want {
			t.Errorf("ReadTail(%d) = %q, %v", max, got, err)
		}
	}
	if _, err := ReadTail(path+".missing", 4); err == nil {
		t.Error("missing file read")
	}
}

func TestMissing(t *testing.T) {
	all := Capabilities{StructuredOutput: true, TokenUsage: true, PermissionDenials: true, UsageLimits: true,
		SessionResume: true, ToolRestrictions: true, Streaming: true}
	if m := all.Missing(); len(m) != 0 {
		t.Errorf("all capabilities: %q", m)
	}
	c := all
	c.PermissionDenials, c.SessionResume = false, false
	m := c.Missing()
	if len(m) != 2 || !strings.HasPrefix(m[0], "no permission-denial reports: the permission-denial breaker is off") ||
		!strings.HasPrefix(m[1], "no session resume") {
		t.Errorf("missing %q", m)
	}
	if n := len((Capabilities{}).Missing()); n != 7 {
		t.Errorf("no capabilities: %d lines", n)
	}
}

func TestLiveLines(t *testing.T) {
	var got []LiveEvent
	emit := func(e LiveEvent) { got = append(got, e) }
	LiveLines(emit)([]byte("a line"))
	want := []LiveEvent{{Kind: LiveOutput, Text: "a line"}}
	if !slices.Equal(got, want) {
		t.Errorf("events %+v", got)
	}
}
