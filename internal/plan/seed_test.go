package plan

import "testing"

func TestSeed(t *testing.T) {
	placeholder := func(s string) bool { return s == "Replace this item" }
	tests := []struct {
		name, src, task, want string
	}{
		{"template: the placeholder goes, the task comes first",
			"# Fix plan: x\n\n## High Priority\n\n- [ ] Replace this item\n\n## Optional\n\n## Completed\n",
			"Add a login page",
			"# Fix plan: x\n\n## High Priority\n\n- [ ] Add a login page\n\n## Optional\n\n## Completed\n"},
		{"empty file", "", "Fix the build", "- [ ] Fix the build\n"},
		{"title only", "# Plan\n", "Fix the build", "# Plan\n\n- [ ] Fix the build\n"},
		{"no section: after the title, the rest kept",
			"# Plan\n\n- [x] done before\n", "Next", "# Plan\n\n- [ ] Next\n\n- [x] done before\n"},
		{"optional and completed are not where work goes",
			"## Optional\n\n- [ ] maybe\n\n## Todo\n- [x] old\n", "Now",
			"## Optional\n\n- [ ] maybe\n\n## Todo\n- [ ] Now\n- [x] old\n"},
		{"line breaks in the task cannot make headings or items",
			"## Tasks\n\n", "Fix it\n## Pwned\n- [x] fake",
			"## Tasks\n\n- [ ] Fix it ## Pwned - [x] fake\n"},
		{"heading at the end without a newline", "## Tasks", "One", "## Tasks\n- [ ] One\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(Seed([]byte(tt.src), tt.task, placeholder))
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			if p := Parse([]byte(got)); len(p.Tasks) == 0 {
				t.Errorf("the seeded plan has no task: %q", got)
			}
		})
	}
}

func FuzzSeed(f *testing.F) {
	f.Add([]byte("# Plan\n\n## High\n\n- [ ] a\n"), "task")
	f.Add([]byte(""), "x\ny")
	f.Fuzz(func(t *testing.T, src []byte, task string) {
		if OneLine(task) == "" {
			return
		}
		before := Parse(src).Counts()
		after := Parse(Seed(src, task, nil)).Counts()
		// Exactly one more open task, whatever the plan and the text.
		if after.OpenRequired+after.OpenOptional != before.OpenRequired+before.OpenOptional+1 || after.Done != before.Done {
			t.Errorf("seeding %q into %q: %+v → %+v", task, src, before, after)
		}
	})
}
