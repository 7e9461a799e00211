package plan

import (
	"fmt"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name     string
		before   string
		after    string
		want     Change
		progress bool
		str      string
	}{
		{
			name:   "identical",
			before: lines("- [ ] a", "- [x] b"),
			after:  lines("- [ ] a", "- [x] b"),
			str:    "no change",
		},
		{
			name:     "one task checked",
			before:   lines("- [ ] a", "- [ ] b"),
			after:    lines("- [x] a", "- [ ] b"),
			want:     Change{Checked: 1},
			progress: true,
			str:      "1 checked",
		},
		{
			name:   "unchecked again",
			before: lines("- [x] a"),
			after:  lines("- [ ] a"),
			want:   Change{Unchecked: 1},
			str:    "1 unchecked",
		},
		{
			name:     "lines moved: matched by text, not by line",
			before:   lines("## Todo", "- [ ] a", "- [ ] b", "- [ ] c", "## Completed"),
			after:    lines("## Todo", "- [ ] c", "- [ ] new", "- [ ] a", "## Completed", "- [x] b"),
			want:     Change{Checked: 1, Added: 1},
			progress: true,
			str:      "1 checked, 1 added",
		},
		{
			name:     "markup and case added when finishing",
			before:   lines("- [ ] Add the `parse` tests", "- [ ] fix bug", "- [ ] Ship it"),
			after:    lines("- [x] ~~add the parse tests~~ ✅", "- [X] **Fix** bug.", "- [ ] ship  it"),
			want:     Change{Checked: 2},
			progress: true,
		},
		{
			name:     "reworded with a suffix pairs by word prefix",
			before:   lines("- [ ] Add tests", "- [ ] fix"),
			after:    lines("- [x] Add tests (done in 3f2a1c)", "- [ ] fixture cleanup"),
			want:     Change{Checked: 1, Added: 1, Removed: 1, RemovedOpen: 1},
			progress: true,
			str:      "1 checked, 1 added, 1 removed (1 open)",
		},
		{
			name:     "rewritten and checked counts as progress",
			before:   lines("- [ ] Implement X"),
			after:    lines("## Completed", "- [x] X implemented with tests"),
			want:     Change{Added: 1, AddedDone: 1, Removed: 1, RemovedOpen: 1},
			progress: true,
			str:      "1 added (1 already checked), 1 removed (1 open)",
		},
		{
			name:   "open task deleted is not progress",
			before: lines("- [ ] a", "- [x] b"),
			after:  lines("- [x] b"),
			want:   Change{Removed: 1, RemovedOpen: 1},
			str:    "1 removed (1 open)",
		},
		{
			name:     "duplicates pair in order",
			before:   lines("- [ ] test", "- [x] test", "- [ ] test"),
			after:    lines("- [x] test", "- [x] test"),
			want:     Change{Checked: 1, Removed: 1, RemovedOpen: 1},
			progress: true,
		},
		{
			name:   "symbol-only texts match themselves",
			before: lines("- [ ] 🚀", "- [ ] ✅"),
			after:  lines("- [ ] 🚀"),
			want:   Change{Removed: 1, RemovedOpen: 1},
		},
		{
			name:   "from empty",
			before: "",
			after:  lines("- [ ] a", "- [ ] b"),
			want:   Change{Added: 2},
			str:    "2 added",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff(Parse([]byte(tt.before)), Parse([]byte(tt.after)))
			if got != tt.want {
				t.Errorf("Diff() = %+v, want %+v", got, tt.want)
			}
			if got.Progress() != tt.progress {
				t.Errorf("Progress() = %v, want %v", got.Progress(), tt.progress)
			}
			if got.Changed() != (tt.want != Change{}) {
				t.Errorf("Changed() = %v", got.Changed())
			}
			if tt.str != "" && got.String() != tt.str {
				t.Errorf("String() = %q, want %q", got.String(), tt.str)
			}
		})
	}
}

func TestDiffLargeRewrite(t *testing.T) {
	// Every task of a big plan gets a note appended and is checked; the
	// prefix pass must pair them all without comparing every pair.
	var before, after strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&before, "- [ ] Add feature number %d\n", i)
		fmt.Fprintf(&after, "- [x] Add feature number %d (done in commit %x)\n", i, i*7919)
	}
	fmt.Fprintf(&before, "- [ ] Add feature number and more\n")
	got := Diff(Parse([]byte(before.String())), Parse([]byte(after.String())))
	want := Change{Checked: 3000, Removed: 1, RemovedOpen: 1}
	if got != want {
		t.Errorf("Diff() = %+v, want %+v", got, want)
	}
}

func TestDiffPrefixPreference(t *testing.T) {
	tests := []struct {
		name, before, after string
		want                Change
	}{
		{
			name:   "after text extends before text",
			before: lines("- [ ] add tests"),
			after:  lines("- [ ] add", "- [x] add tests for parser"),
			want:   Change{Checked: 1, Added: 1},
		},
		{
			name:   "before text extends after text: longest wins",
			before: lines("- [ ] add unit tests now"),
			after:  lines("- [ ] add", "- [x] add unit tests"),
			want:   Change{Checked: 1, Added: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diff(Parse([]byte(tt.before)), Parse([]byte(tt.after))); got != tt.want {
				t.Errorf("Diff() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTaskKey(t *testing.T) {
	tests := map[string]string{
		"Add the `parse` tests": "add the parse tests",
		"~~Done~~ ✅":            "done",
		"  Ünïcode   Straße ":   "ünïcode straße",
		"🚀":                     "🚀",
		"v1.2.3":                "v1 2 3",
	}
	for in, want := range tests {
		if got := taskKey(in); got != want {
			t.Errorf("taskKey(%q) = %q, want %q", in, got, want)
		}
	}
}
