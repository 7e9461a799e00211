package scaffold

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"ralph/internal/plan"
)

// Priority is the fix_plan.md section a task goes to.
type Priority int

const (
	High Priority = iota
	Medium
	Low
	Optional
	Completed // only for rendering: checked tasks always go here
)

// Task is one item for fix_plan.md.
type Task struct {
	Text     string
	Done     bool
	Priority Priority
	Group    string // the heading it came from, written as a "###" sub-heading; "" for none
	Depth    int    // nesting under another task
}

func (t Task) line() string {
	box := "[ ]"
	if t.Done {
		box = "[x]"
	}
	return strings.Repeat("  ", t.Depth) + "- " + box + " " + t.Text
}

// TaskSource yields the tasks a new plan starts with. The file sources are
// below; GitHub issues (by label, with a limit) are another implementation,
// built in internal/github, which `ralph enable` adds to its sources.
type TaskSource interface {
	// Describe names the source for messages: "prd.md", "GitHub issues labelled ralph-task".
	Describe() string
	Tasks(ctx context.Context) ([]Task, error)
}

// FileFormat says how a FileSource reads its file.
type FileFormat int

const (
	FormatPRD       FileFormat = iota // headings and list items of a Markdown or text document
	FormatChecklist                   // only the "- [ ]" / "- [x]" items, sections kept
)

// FileSource reads tasks from a file in the project or elsewhere.
type FileSource struct {
	Path   string
	Format FileFormat
}

func (f FileSource) Describe() string { return f.Path }

// Tasks reads the file. A missing file is a KindNotFound error, so the
// command can say so with its own exit code before it writes anything.
func (f FileSource) Tasks(context.Context) ([]Task, error) {
	src, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errorf(KindNotFound, err, "%s: no such file", f.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	if info, err := os.Stat(f.Path); err == nil && info.IsDir() {
		return nil, errorf(KindBadInput, nil, "%s is a directory, not a file", f.Path)
	}
	if f.Format == FormatChecklist {
		return ParseChecklist(src), nil
	}
	return ParsePRD(src), nil
}

// sectionKind is what a heading tells about the items below it.
type sectionKind struct {
	priority Priority
	set      bool // the heading sets a priority
	label    bool // the heading is only a priority ("Must have"), no group
	skip     bool // the items below are not work: background, non-goals
}

var (
	// Headings whose items are context or exclusions, not work. The PRD
	// itself goes to .ralph/specs/, so nothing in them is lost. The whole
	// title must match, so "Context menu" is still a feature.
	skipHeadingRE = regexp.MustCompile(`^(overview|introduction|background|context|summary|motivation|problem( statement)?|goals|non[- ]?goals|out of scope|won'?t have|will not have|references|glossary|appendix|open questions|questions|risks|assumptions|stakeholders|(table of )?contents|changelog|revision history|(success )?metrics)( (and|&) .*)?$`)
	// Headings that are a priority level, MoSCoW or plain words.
	priorityLabelRE = []struct {
		re *regexp.Regexp
		p  Priority
	}{
		{regexp.MustCompile(`^(must[- ]haves?|must|critical|high(est)? priority|high|mvp|p0)\b`), High},
		{regexp.MustCompile(`^(should[- ]haves?|should|medium priority|medium|p1)\b`), Medium},
		{regexp.MustCompile(`^(could[- ]haves?|could|low(est)? priority|low|p[23])\b`), Low},
		{regexp.MustCompile(`^(optional|nice[- ]to[- ]haves?|future|stretch( goals?)?|later)\b`), Optional},
	}
	// A priority tag inside a feature heading: "Export (P1)".
	priorityTagRE = regexp.MustCompile(`\bp([0-3])\b`)
	headingRE     = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	bulletRE      = regexp.MustCompile(`^(\s*)(?:[-*+•]|\d{1,9}[.)])\s+(.*\S)\s*$`)
	boxRE         = regexp.MustCompile(`^\[([ xX])\]\s+(.*)$`)
	fenceRE       = regexp.MustCompile("^\\s*(```|~~~)")
)

// classify reads a heading title (already normalised).
func classify(title string) sectionKind {
	if skipHeadingRE.MatchString(title) {
		return sectionKind{skip: true}
	}
	for _, pr := range priorityLabelRE {
		if pr.re.MatchString(title) {
			return sectionKind{priority: pr.p, set: true, label: true}
		}
	}
	if m := priorityTagRE.FindStringSubmatch(title); m != nil {
		p := map[string]Priority{"0": High, "1": Medium, "2": Low, "3": Low}[m[1]]
		return sectionKind{priority: p, set: true}
	}
	return sectionKind{}
}

// normTitle lower-cases a heading and drops numbering, emphasis and
// trailing colons, so "## 2. **Must Have:**" reads "must have".
func normTitle(s string) string {
	s = strings.ToLower(strings.NewReplacer("*", "", "_", "", "`", "").Replace(s))
	s = strings.TrimLeft(s, "0123456789.) \t")
	return strings.TrimSpace(strings.TrimRight(s, ": \t"))
}

// cleanText makes a list item's text one clean plan line.
func cleanText(s string) string {
	s = strings.TrimSpace(s)
	if m := boxRE.FindStringSubmatch(s); m != nil {
		s = m[2]
	}
	return strings.Join(strings.Fields(s), " ")
}

// ParsePRD turns a Markdown or plain-text document into tasks without any
// agent: every list item (bullet or numbered, checkboxes kept) becomes a
// task, grouped under its nearest heading, and a heading with neither items
// nor sub-headings becomes a task itself. Headings decide the priority
// ("Must have", "P1", "Nice to have", "Future"…, inherited by sub-headings)
// and skip sections that hold no work ("Background", "Non-goals", "Open
// questions"…). The first top-level heading is the document's title.
// Fenced code blocks are ignored.
func ParsePRD(src []byte) []Task {
	type heading struct {
		level   int
		title   string
		kind    sectionKind
		content bool // it has items or sub-headings
	}
	var (
		out     []Task
		stack   []*heading
		indents []int // indentation of the enclosing list items
		fence   string
		sawH1   bool
	)
	ctx := func() (Priority, string, bool) {
		p, group := High, ""
		for _, h := range stack {
			if h.kind.skip {
				return 0, "", true
			}
			if h.kind.set {
				p = h.kind.priority
			}
			if !h.kind.label && h.level > 1 {
				group = h.title
			}
		}
		return p, group, false
	}
	closeTo := func(level int) {
		for len(stack) > 0 && stack[len(stack)-1].level >= level {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if h.content || h.kind.label || h.kind.skip {
				continue
			}
			if p, group, skip := ctx(); !skip {
				if h.kind.set {
					p = h.kind.priority
				}
				out = append(out, Task{Text: h.title, Priority: p, Group: group})
			}
		}
	}
	for line := range strings.Lines(string(src)) {
		line = strings.TrimRight(line, "\r\n")
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			if fence == "" {
				fence = m[1]
			} else if fence == m[1] {
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			level, title := len(m[1]), strings.TrimRight(cleanText(m[2]), ":")
			indents = indents[:0]
			if level == 1 && !sawH1 {
				sawH1 = true // the title: neither a group nor a task
				continue
			}
			closeTo(level)
			if len(stack) > 0 {
				stack[len(stack)-1].content = true
			}
			stack = append(stack, &heading{level: level, title: title, kind: classify(normTitle(m[2]))})
			continue
		}
		m := bulletRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := cleanText(m[2])
		if text == "" {
			continue
		}
		if len(stack) > 0 {
			stack[len(stack)-1].content = true
		}
		indent := len(strings.ReplaceAll(m[1], "\t", "    "))
		for len(indents) > 0 && indents[len(indents)-1] >= indent {
			indents = indents[:len(indents)-1]
		}
		depth := len(indents)
		indents = append(indents, indent)
		p, group, skip := ctx()
		if skip {
			continue
		}
		done := false
		if b := boxRE.FindStringSubmatch(strings.TrimSpace(m[2])); b != nil {
			done = b[1] != " "
		}
		out = append(out, Task{Text: text, Done: done, Priority: p, Group: group, Depth: depth})
	}
	closeTo(0)
	return out
}

// ParseChecklist keeps only a document's checkbox items, with the rules of
// fix_plan.md itself (internal/plan): their state, nesting and optional
// sections carry over, and section headings decide priority as in ParsePRD.
func ParseChecklist(src []byte) []Task {
	p := plan.Parse(src)
	out := make([]Task, 0, len(p.Tasks))
	for _, t := range p.Tasks {
		task := Task{Text: t.Text, Done: t.Done, Depth: t.Depth, Priority: High}
		kind := classify(normTitle(t.Section))
		switch {
		case t.Optional:
			task.Priority = Optional
		case kind.set:
			task.Priority = kind.priority
		}
		if !kind.label && t.Section != "" && !isPlanSection(t.Section) {
			task.Group = strings.TrimRight(t.Section, ":")
		}
		out = append(out, task)
	}
	return out
}

// isPlanSection tells the headings of a fix_plan.md-style list, which the
// new plan has anyway, from real groups.
func isPlanSection(title string) bool {
	switch normTitle(title) {
	case "completed", "done", "tasks", "todo", "to do", "fix plan", "plan", "checklist":
		return true
	}
	return false
}

// specName is where an imported document is kept under .ralph/specs/.
func specName(path string) string { return filepath.Base(path) }
