package plan

import (
	"fmt"
	"strings"
	"testing"
)

// bigPlan builds a plan shaped like a long real one: sections, nested
// tasks, fenced examples, comments and an optional tail.
func bigPlan(tasks int) []byte {
	var b strings.Builder
	b.WriteString("# Fix plan\n\n")
	for i := 0; i < tasks; i++ {
		if i%100 == 0 {
			title := fmt.Sprintf("## Phase %d", i/100)
			if i >= tasks*9/10 {
				title = "## Future Enhancements"
			}
			fmt.Fprintf(&b, "\n%s\n\n<!-- owner: agent -->\n```go\n// - [ ] not a task\n```\n\n", title)
		}
		box := " "
		if i%3 == 0 {
			box = "x"
		}
		indent := strings.Repeat("  ", i%3)
		fmt.Fprintf(&b, "%s- [%s] Implement **feature %d** in `internal/pkg%d` and add tests\n", indent, box, i, i%17)
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	src := bigPlan(2000)
	if n := len(Parse(src).Tasks); n != 2000 {
		b.Fatalf("bigPlan has %d tasks, want 2000", n)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(src)
	}
}

func BenchmarkDiff(b *testing.B) {
	before := Parse(bigPlan(2000))
	after := Parse(bigPlan(2000))
	for i := range after.Tasks {
		if i%2 == 0 {
			after.Tasks[i].Done = true
			after.Tasks[i].Text += " (done)"
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		Diff(before, after)
	}
}
