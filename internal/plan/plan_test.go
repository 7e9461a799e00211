package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanState(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		counts   Counts
		complete bool
		next     string // text of NextOpen, "" for nil
		summary  string
	}{
		{
			name:    "empty file is not complete",
			src:     "",
			summary: "no tasks",
		},
		{
			name:    "prose without boxes is not complete",
			src:     lines("# Plan", "Nothing to do.", "- a plain bullet"),
			summary: "no tasks",
		},
		{
			name:    "open required work",
			src:     lines("- [x] a", "- [ ] b", "- [ ] c", "## Optional", "- [ ] d", "- [x] e"),
			counts:  Counts{Total: 5, Done: 2, OpenRequired: 2, OpenOptional: 1},
			next:    "b",
			summary: "2/5 tasks done (1 optional open)",
		},
		{
			name:     "only optional work left is complete",
			src:      lines("- [x] a", "## Future", "- [ ] b", "- [ ] c"),
			counts:   Counts{Total: 3, Done: 1, OpenOptional: 2},
			complete: true,
			summary:  "1/3 tasks done (2 optional open)",
		},
		{
			name:     "plan of optional tasks only is complete",
			src:      lines("## Nice to Have", "- [ ] b"),
			counts:   Counts{Total: 1, OpenOptional: 1},
			complete: true,
			summary:  "0/1 task done (1 optional open)",
		},
		{
			name:     "all done",
			src:      lines("- [x] a", "  - [X] b"),
			counts:   Counts{Total: 2, Done: 2},
			complete: true,
			summary:  "2/2 tasks done",
		},
		{
			name:    "next open skips optional tasks that come first",
			src:     lines("## Optional", "- [ ] o", "## Main", "- [x] a", "- [ ] b"),
			counts:  Counts{Total: 3, Done: 1, OpenRequired: 1, OpenOptional: 1},
			next:    "b",
			summary: "1/3 tasks done (1 optional open)",
		},
		{
			name:    "open task in the completed section blocks completion",
			src:     lines("## Completed", "- [x] a", "- [ ] b"),
			counts:  Counts{Total: 2, Done: 1, OpenRequired: 1},
			next:    "b",
			summary: "1/2 tasks done",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parse([]byte(tt.src))
			if got := p.Counts(); got != tt.counts {
				t.Errorf("Counts() = %+v, want %+v", got, tt.counts)
			}
			if got := p.Complete(); got != tt.complete {
				t.Errorf("Complete() = %v, want %v", got, tt.complete)
			}
			next := ""
			if n := p.NextOpen(); n != nil {
				next = n.Text
			}
			if next != tt.next {
				t.Errorf("NextOpen() = %q, want %q", next, tt.next)
			}
			if got := p.Summary(); got != tt.summary {
				t.Errorf("Summary() = %q, want %q", got, tt.summary)
			}
		})
	}
}

func TestNextOpenPointsIntoTasks(t *testing.T) {
	p := Parse([]byte(lines("- [x] a", "- [ ] b")))
	n := p.NextOpen()
	if n != &p.Tasks[1] {
		t.Fatalf("NextOpen() = %p, want &Tasks[1] = %p", n, &p.Tasks[1])
	}
	if n.Line != 2 || n.Section != "" || n.Depth != 0 {
		t.Errorf("NextOpen() = %+v", *n)
	}
}

func TestHandBuiltPlan(t *testing.T) {
	// Other packages build Plans in their tests; derived values must follow.
	p := Plan{Tasks: []Task{{Text: "a", Done: true}, {Text: "b", Optional: true}}}
	if !p.Complete() || p.Summary() != "1/2 tasks done (1 optional open)" {
		t.Errorf("Complete() = %v, Summary() = %q", p.Complete(), p.Summary())
	}
}

func TestWarningString(t *testing.T) {
	if got := (Warning{Line: 3, Message: "m"}).String(); got != "line 3: m" {
		t.Errorf("got %q", got)
	}
	if got := (Warning{Message: "m"}).String(); got != "m" {
		t.Errorf("got %q", got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fix_plan.md")
	if err := os.WriteFile(path, []byte("## Later\r\n- [ ] a\r\n- [x] b\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Summary(); got != "1/2 tasks done" {
		t.Errorf("Load: Summary() = %q", got)
	}
	p, err = Options{OptionalSections: []string{"Later"}}.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Summary(); got != "1/2 tasks done (1 optional open)" {
		t.Errorf("Options.Load: Summary() = %q", got)
	}

	missing := filepath.Join(dir, "nope.md")
	_, err = Load(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: err = %v, want it to name %s", err, missing)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("directory: err = %v, want an error naming %s", err, dir)
	}
}
