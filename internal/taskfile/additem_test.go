package taskfile

import "testing"

// A follow-up round's item goes at the end of the checklist, or into a
// checklist made for it, never into another section.
func TestAddItem(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"after the ticked items", "# Task: x\n\n## Checklist\n\n- [x] one\n- [x] two\n\n## RALPH_STATUS\n\nSTATUS: COMPLETE\n",
			"# Task: x\n\n## Checklist\n\n- [x] one\n- [x] two\n- [ ] round 1\n\n## RALPH_STATUS\n\nSTATUS: COMPLETE\n"},
		{"an empty checklist", "# Task: x\n\n## Checklist\n\n## RALPH_STATUS\n",
			"# Task: x\n\n## Checklist\n- [ ] round 1\n\n## RALPH_STATUS\n"},
		{"no checklist", "# Task: x\n\n## RALPH_STATUS\n",
			"# Task: x\n\n## Checklist\n\n- [ ] round 1\n\n## RALPH_STATUS\n"},
		{"a multi-line item stays one line", "## Checklist\n- [x] a\n", "## Checklist\n- [x] a\n- [ ] round 1\n"},
	} {
		item := "round 1"
		if c.name == "a multi-line item stays one line" {
			item = "round\n 1"
		}
		if got := string(AddItem([]byte(c.in), item)); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	f, err := Parse("t.md", AddItem([]byte("# Task: x\n\n## Checklist\n\n- [x] one\n\n## RALPH_STATUS\n"), "round 1"))
	if err != nil || f.Checklist.Complete() || f.Checklist.NextOpen() == nil || f.Checklist.NextOpen().Text != "round 1" {
		t.Errorf("the item is not the next open one: %+v, %v", f.Checklist, err)
	}
}
