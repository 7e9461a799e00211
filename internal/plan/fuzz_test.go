package plan

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// FuzzParse checks the invariants the loop relies on for any input: no
// panic, counts that add up, tasks in file order, a completion verdict that
// agrees with the counts, and line endings that do not change the result.
func FuzzParse(f *testing.F) {
	f.Add([]byte(lines("# Plan", "- [ ] a", "  - [x] b", "## Optional", "- [ ] c")))
	f.Add([]byte("\uFEFF- [X] a\r\n```\r\n- [ ] b\r\n```\r\n<!--\r\n- [ ] c\r\n-->\r\n"))
	f.Add([]byte(lines("Future", "---", "1. [ ] a", "- [  ] b", "-[ ] c", "- [2026-01-29] d")))
	f.Fuzz(func(t *testing.T, src []byte) {
		p := Parse(src)
		c := p.Counts()
		if c.Done+c.OpenRequired+c.OpenOptional != c.Total || c.Total != len(p.Tasks) {
			t.Fatalf("inconsistent counts %+v for %d tasks", c, len(p.Tasks))
		}
		nLines := bytes.Count(src, []byte("\n")) + bytes.Count(src, []byte("\r")) + 1
		prev := 0
		for _, task := range p.Tasks {
			if task.Line <= prev || task.Line > nLines {
				t.Fatalf("task line %d after %d, file has %d lines", task.Line, prev, nLines)
			}
			prev = task.Line
			if task.Text == "" || strings.ContainsAny(task.Text, "\r\n") || task.Text != strings.TrimSpace(task.Text) {
				t.Fatalf("bad task text %q", task.Text)
			}
			if task.Depth < 0 {
				t.Fatalf("negative depth %d", task.Depth)
			}
		}
		if p.Complete() != (c.Total > 0 && c.OpenRequired == 0) {
			t.Fatalf("Complete() = %v with counts %+v", p.Complete(), c)
		}
		if (p.NextOpen() == nil) != (c.OpenRequired == 0) {
			t.Fatalf("NextOpen() = %v with counts %+v", p.NextOpen(), c)
		}
		if len(p.Warnings) > maxWarnings+2 {
			t.Fatalf("%d warnings, cap is %d", len(p.Warnings), maxWarnings)
		}
		if d := Diff(p, p); d.Changed() {
			t.Fatalf("Diff of a plan with itself = %+v", d)
		}
		if !bytes.ContainsRune(src, '\r') {
			crlf := Parse(bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n")))
			if !slices.Equal(crlf.Tasks, p.Tasks) {
				t.Fatalf("CRLF changed the tasks:\n LF %+v\nCRLF %+v", p.Tasks, crlf.Tasks)
			}
		}
	})
}
