package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// brief renders tasks compactly so a table row shows the whole expectation:
// "3 [x] text", plus " opt" and " d=N" when they apply.
func brief(tasks []Task) []string {
	out := make([]string, 0, len(tasks))
	for _, t := range tasks {
		box := " "
		if t.Done {
			box = "x"
		}
		s := fmt.Sprintf("%d [%s] %s", t.Line, box, t.Text)
		if t.Optional {
			s += " opt"
		}
		if t.Depth > 0 {
			s += fmt.Sprintf(" d=%d", t.Depth)
		}
		out = append(out, s)
	}
	return out
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestParseTasks(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
		warn []string // substrings, one per expected warning, in order
	}{
		{
			name: "bullets and box states",
			src:  lines("- [ ] a", "- [x] b", "- [X] c", "* [ ] d", "+ [x] e"),
			want: []string{"1 [ ] a", "2 [x] b", "3 [x] c", "4 [ ] d", "5 [x] e"},
		},
		{
			name: "brackets that are not boxes stay quiet",
			src:  lines("- [2026-01-29] log entry", "- [v1.0] release", "- [link](http://x)", "- [WIP] thing", "- plain item"),
		},
		{
			name: "near misses are warned about",
			src:  lines("- [  ] two spaces", "-[ ] no space after bullet", "- [] empty brackets", "- [x]glued", "- [ x ] padded", "[ ] no bullet"),
			warn: []string{"[  ] is not a task", "no space between list marker", "[] is not a task", "no space after checkbox", "[ x ] is not a task", "without a list marker"},
		},
		{
			name: "box without text is not a task",
			src:  lines("- [ ]", "- [x]   ", "- [ ] <!-- later -->", "- [ ] real"),
			want: []string{"4 [ ] real"},
			warn: []string{"without text", "without text", "without text"},
		},
		{
			name: "trailing and inner blanks are trimmed",
			src:  "- [x] task   \n-   [ ]\tspaced   out  \n",
			want: []string{"1 [x] task", "2 [ ] spaced   out"},
		},
		{
			name: "box inside a sentence, code span or quote",
			src:  lines("Use - [ ] to mark a task.", "Write `- [ ] x` in the file.", "> - [ ] quoted", "| - [ ] | table |", "**- [ ] bold**"),
		},
		{
			name: "numbered items count",
			src:  lines("1. [ ] one", "2) [x] two", "10. [ ] ten", "1.[ ] glued", "1234567890. [ ] too long"),
			want: []string{"1 [ ] one", "2 [x] two", "3 [ ] ten"},
		},
		{
			name: "nested items and depth",
			src: lines(
				"- [ ] parent",
				"  - [x] child",
				"    - [ ] grandchild",
				"  - [ ] second child",
				"- plain parent",
				"    * [ ] four-space child",
				"\t- [ ] tab child",
				" - [ ] one space is a sibling",
				"1. [ ] numbered",
				"   - [ ] under numbered",
			),
			want: []string{
				"1 [ ] parent", "2 [x] child d=1", "3 [ ] grandchild d=2", "4 [ ] second child d=1",
				"6 [ ] four-space child d=1", "7 [ ] tab child d=1", "8 [ ] one space is a sibling",
				"9 [ ] numbered", "10 [ ] under numbered d=1",
			},
		},
		{
			name: "nesting survives blank lines and ends at a paragraph",
			src:  lines("- [ ] a", "", "    - [ ] b", "", "text", "  - [ ] c"),
			want: []string{"1 [ ] a", "3 [ ] b d=1", "6 [ ] c"},
		},
		{
			name: "fenced code blocks hide tasks and headings",
			src: lines(
				"```markdown", "- [ ] in backticks", "## Optional", "```",
				"- [ ] after backticks",
				"~~~", "- [ ] in tildes", "```", "- [ ] still in tildes", "~~~",
				"````", "```", "- [ ] in long fence", "````",
				"- [ ] end",
			),
			want: []string{"5 [ ] after backticks", "15 [ ] end"},
		},
		{
			name: "indented fence inside a list item",
			src:  lines("- [ ] task", "  ```go", "  - [ ] example", "  ```", "  - [ ] sub"),
			want: []string{"1 [ ] task", "5 [ ] sub d=1"},
		},
		{
			name: "backticks with a backtick in the info string are inline code",
			src:  lines("```x``` is code", "- [ ] counted"),
			want: []string{"2 [ ] counted"},
		},
		{
			name: "unclosed fence hides the rest and says so",
			src:  lines("- [ ] before", "```", "- [ ] hidden", "- [x] hidden too"),
			want: []string{"1 [ ] before"},
			warn: []string{"line 2: code fence is never closed; 2 checkbox"},
		},
		{
			name: "HTML comments",
			src: lines(
				"<!-- - [ ] one-line comment -->",
				"<!--",
				"- [ ] commented out",
				"-->",
				"- [ ] visible <!-- note --> text",
				"  <!-- indented -->",
				"<!-- a --> - [ ] after a comment on its line",
				"- [ ] last",
				"<!-->",
				"- [ ] after an empty comment",
			),
			want: []string{"5 [ ] visible  text", "8 [ ] last", "10 [ ] after an empty comment"},
		},
		{
			name: "unclosed comment",
			src:  lines("- [ ] a", "<!-- TODO", "- [ ] b"),
			want: []string{"1 [ ] a"},
			warn: []string{"line 2: HTML comment is never closed; 1 checkbox"},
		},
		{
			name: "CRLF, lone CR, BOM and tabs",
			src:  "\uFEFF- [ ] a\r\n- [x] b\r\n\t- [ ] c\r- [ ]\td\r\n",
			want: []string{"1 [ ] a", "2 [x] b", "3 [ ] c d=1", "4 [ ] d"},
		},
		{
			name: "no trailing newline and empty input",
			src:  "- [x] only",
			want: []string{"1 [x] only"},
		},
		{name: "empty", src: ""},
		{
			name: "thematic breaks are not list items",
			src:  lines("* * *", "- - -", "- [ ] task"),
			want: []string{"3 [ ] task"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parse([]byte(tt.src))
			if got := brief(p.Tasks); !slices.Equal(got, tt.want) {
				t.Errorf("tasks:\n got %q\nwant %q", got, tt.want)
			}
			checkWarnings(t, p.Warnings, tt.warn)
		})
	}
}

func checkWarnings(t *testing.T, got []Warning, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("warnings: got %d %v, want %d %q", len(got), got, len(want), want)
		return
	}
	for i, w := range got {
		if !strings.Contains(w.String(), want[i]) {
			t.Errorf("warning %d = %q, want it to contain %q", i, w.String(), want[i])
		}
	}
}

func TestParseSections(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "default optional names, any case, emoji and colons",
			src: lines(
				"## High Priority", "- [ ] req",
				"## Optional", "- [ ] o1",
				"## 🚀 FUTURE ENHANCEMENTS:", "- [ ] o2",
				"## **Nice to have**", "- [ ] o3",
				"## 3. Future", "- [ ] o4",
			),
			want: []string{"2 [ ] req", "4 [ ] o1 opt", "6 [ ] o2 opt", "8 [ ] o3 opt", "10 [ ] o4 opt"},
		},
		{
			name: "a name followed by space, colon or parenthesis counts",
			src: lines(
				"## Optional Features", "- [ ] a",
				"## Future: v2", "- [ ] b",
				"## Future (after launch)", "- [ ] c",
				"## Nice to Have 🎁", "- [ ] d",
			),
			want: []string{"2 [ ] a opt", "4 [ ] b opt", "6 [ ] c opt", "8 [ ] d opt"},
		},
		{
			name: "similar titles are required",
			src: lines(
				"## Futures", "- [ ] a",
				"## Future-proofing", "- [ ] b",
				"## Phase 3 (optional)", "- [ ] c",
				"## Optionality", "- [ ] d",
				"## Not Optional", "- [ ] e",
			),
			want: []string{"2 [ ] a", "4 [ ] b", "6 [ ] c", "8 [ ] d", "10 [ ] e"},
		},
		{
			name: "sub-headings inherit until a heading of the same or higher level",
			src: lines(
				"# Plan",
				"## Optional",
				"### Ideas", "- [ ] a",
				"#### Deep", "- [ ] b",
				"## Core", "- [ ] c",
				"### Future", "- [ ] d",
				"### Next", "- [ ] e",
				"## Future", "- [ ] f",
				"# Appendix", "- [ ] g",
			),
			want: []string{"4 [ ] a opt", "6 [ ] b opt", "8 [ ] c", "10 [ ] d opt", "12 [ ] e", "14 [ ] f opt", "16 [ ] g"},
		},
		{
			name: "tasks before any heading are required",
			src:  lines("- [ ] first", "## Optional", "- [ ] later"),
			want: []string{"1 [ ] first", "3 [ ] later opt"},
		},
		{
			name: "closed ATX headings, hashtags and indented hashes",
			src: lines(
				"## Optional ##", "- [ ] a",
				"#Optional", "- [ ] b",
				"## Main", "    ## Optional", "- [ ] c",
				"####### Optional", "- [ ] d",
			),
			want: []string{"2 [ ] a opt", "4 [ ] b opt", "7 [ ] c", "9 [ ] d"},
		},
		{
			name: "setext headings",
			src: lines(
				"Main", "====", "- [ ] a",
				"", "Optional", "--------", "- [ ] b",
				"", "Core", "=", "- [ ] c",
			),
			want: []string{"3 [ ] a", "7 [ ] b opt", "11 [ ] c"},
		},
		{
			name: "a rule is not an underline after a blank line or a list item",
			src: lines(
				"## Optional", "- [ ] a",
				"---", "- [ ] b",
				"", "---", "- [ ] c",
				"- [ ] d", "lazy continuation", "---", "- [ ] e",
			),
			want: []string{"2 [ ] a opt", "4 [ ] b opt", "7 [ ] c opt", "8 [ ] d opt", "11 [ ] e opt"},
		},
		{
			name: "multi-line setext title",
			src:  lines("## Main", "", "Nice to have", "for later", "---", "- [ ] x"),
			want: []string{"6 [ ] x opt"},
		},
		{
			name: "headings inside code and comments change nothing",
			src:  lines("## Main", "```", "## Optional", "```", "<!--", "## Future", "-->", "- [ ] x"),
			want: []string{"8 [ ] x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := brief(Parse([]byte(tt.src)).Tasks); !slices.Equal(got, tt.want) {
				t.Errorf("tasks:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestParseSectionTitle(t *testing.T) {
	src := lines(
		"- [ ] top",
		"# 🎯 Plan #",
		"## High *Priority* <!-- p0 -->", "- [ ] a",
		"", "Later Work:", "---", "- [ ] b",
		"## C#", "- [ ] c",
		"##", "- [ ] d",
	)
	var got []string
	for _, task := range Parse([]byte(src)).Tasks {
		got = append(got, task.Section)
	}
	want := []string{"", "High *Priority*", "Later Work:", "C#", ""}
	if !slices.Equal(got, want) {
		t.Errorf("sections = %q, want %q", got, want)
	}
}

func TestParseCompletedSection(t *testing.T) {
	src := lines(
		"## Tasks", "- [ ] open",
		"## Completed", "- [x] finished", "- [ ] moved but not checked",
		"### Phase 1", "- [ ] nested leftover",
		"## Done", "- [X] also finished",
		"## Later", "- [ ] fine",
	)
	p := Parse([]byte(src))
	want := []string{"2 [ ] open", "4 [x] finished", "5 [ ] moved but not checked", "7 [ ] nested leftover", "9 [x] also finished", "11 [ ] fine"}
	if got := brief(p.Tasks); !slices.Equal(got, want) {
		t.Errorf("tasks:\n got %q\nwant %q", got, want)
	}
	checkWarnings(t, p.Warnings, []string{`line 5: unchecked task "moved but not checked"`, "line 7: unchecked task"})
	if c := p.Counts(); c.OpenRequired != 4 || c.Done != 2 {
		t.Errorf("counts = %+v, want 4 open required and 2 done", c)
	}
}

func TestParseOptions(t *testing.T) {
	src := lines("## Optional", "- [ ] a", "## Later", "- [ ] b", "## Archive", "- [ ] c")
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"defaults", Options{}, []string{"2 [ ] a opt", "4 [ ] b", "6 [ ] c"}},
		{"custom names replace the defaults", Options{OptionalSections: []string{"later:", "  "}}, []string{"2 [ ] a", "4 [ ] b opt", "6 [ ] c"}},
		{"empty list switches optional sections off", Options{OptionalSections: []string{}}, []string{"2 [ ] a", "4 [ ] b", "6 [ ] c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := brief(tt.opts.Parse([]byte(src)).Tasks); !slices.Equal(got, tt.want) {
				t.Errorf("tasks:\n got %q\nwant %q", got, tt.want)
			}
		})
	}

	p := Options{CompletedSections: []string{"Archive"}}.Parse([]byte(src))
	checkWarnings(t, p.Warnings, []string{"line 6: unchecked task"})
	if p := (Options{CompletedSections: []string{}}).Parse([]byte(lines("## Done", "- [ ] x"))); len(p.Warnings) != 0 {
		t.Errorf("completed sections off: warnings = %v", p.Warnings)
	}
}

func TestParseWarningCap(t *testing.T) {
	src := strings.Repeat("- [  ] typo\n", maxWarnings+7) + "```\n- [ ] hidden\n"
	p := Parse([]byte(src))
	if got := len(p.Warnings); got != maxWarnings+2 {
		t.Fatalf("got %d warnings, want %d", got, maxWarnings+2)
	}
	checkWarnings(t, p.Warnings[maxWarnings:], []string{"7 more warning(s) not shown", "code fence is never closed; 1 checkbox"})
}

func TestStripInlineComments(t *testing.T) {
	tests := map[string]string{
		"plain":                           "plain",
		"a <!-- 1 --> b <!--2-->c":        "a  b c",
		"a <!-- open":                     "a ",
		"<!---->x<!-- a --> y <!-- z":     "x y ",
		"a --> b <!-- c --> d":            "a --> b  d",
		strings.Repeat("x<!---->", 10000): strings.Repeat("x", 10000),
	}
	for in, want := range tests {
		if got := stripInlineComments(in); got != want {
			t.Errorf("stripInlineComments(%.40q) = %.40q, want %.40q", in, got, want)
		}
	}
}
