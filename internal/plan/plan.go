package plan

import (
	"fmt"
	"os"
	"strconv"
)

// Task is one checkbox item.
type Task struct {
	Line     int    `json:"line"`     // 1-based line number in the file
	Text     string `json:"text"`     // first line after the box, trimmed, inline comments removed
	Done     bool   `json:"done"`     // [x] or [X]
	Optional bool   `json:"optional"` // under an optional section; never blocks completion
	Section  string `json:"section"`  // title of the nearest heading above, "" if none
	Depth    int    `json:"depth"`    // enclosing list items; 0 for a top-level item
}

// Warning is something in the file that is probably not what its author
// meant, such as a near-miss checkbox. Warnings never change the counts.
type Warning struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// String prefixes the line number; Line 0 means the whole file.
func (w Warning) String() string {
	if w.Line <= 0 {
		return w.Message
	}
	return "line " + strconv.Itoa(w.Line) + ": " + w.Message
}

// Plan is the parsed task file. Everything but Tasks and Warnings is derived
// from Tasks on demand, so a Plan built by hand in another package's test
// behaves exactly like a parsed one.
type Plan struct {
	Tasks    []Task    `json:"tasks"`
	Warnings []Warning `json:"warnings,omitempty"`
}

// Counts are the numbers the loop and the status file show. Total always
// equals Done + OpenRequired + OpenOptional.
type Counts struct {
	Total        int `json:"total"`
	Done         int `json:"done"`
	OpenRequired int `json:"open_required"`
	OpenOptional int `json:"open_optional"`
}

// Counts tallies the tasks.
func (p Plan) Counts() Counts {
	c := Counts{Total: len(p.Tasks)}
	for _, t := range p.Tasks {
		switch {
		case t.Done:
			c.Done++
		case t.Optional:
			c.OpenOptional++
		default:
			c.OpenRequired++
		}
	}
	return c
}

// Complete reports whether every required task is checked. A plan without
// any task is not complete: an empty or mangled file must not end the loop.
func (p Plan) Complete() bool {
	c := p.Counts()
	return c.Total > 0 && c.OpenRequired == 0
}

// NextOpen returns the first open required task in file order, which is what
// the agent is told to work on, or nil when there is none. The pointer refers
// into p.Tasks.
func (p Plan) NextOpen() *Task {
	for i := range p.Tasks {
		if t := &p.Tasks[i]; !t.Done && !t.Optional {
			return t
		}
	}
	return nil
}

// Summary is a one-line account for logs and the status view, such as
// "3/7 tasks done (2 optional open)".
func (p Plan) Summary() string {
	c := p.Counts()
	if c.Total == 0 {
		return "no tasks"
	}
	noun := "tasks"
	if c.Total == 1 {
		noun = "task"
	}
	s := fmt.Sprintf("%d/%d %s done", c.Done, c.Total, noun)
	if c.OpenOptional > 0 {
		s += fmt.Sprintf(" (%d optional open)", c.OpenOptional)
	}
	return s
}

// Options change which headings mark special sections. A nil slice means the
// default list; an empty non-nil slice means no such sections at all, so a
// user can switch the feature off from configuration.
type Options struct {
	OptionalSections  []string
	CompletedSections []string
}

// DefaultOptionalSections returns the section names whose tasks do not block
// completion. It returns a fresh slice so callers may change it.
func DefaultOptionalSections() []string {
	return []string{"Optional", "Future", "Future Enhancements", "Nice to Have"}
}

// DefaultCompletedSections returns the section names that hold finished work.
func DefaultCompletedSections() []string {
	return []string{"Completed", "Done"}
}

// Parse reads a plan with the default options.
func Parse(src []byte) Plan {
	return Options{}.Parse(src)
}

// Load reads and parses the file at path with the default options.
func Load(path string) (Plan, error) {
	return Options{}.Load(path)
}

// Load reads and parses the file at path. The error wraps the *fs.PathError
// from the read, so it names the file and errors.Is(err, fs.ErrNotExist)
// tells a missing plan apart from an unreadable one.
func (o Options) Load(path string) (Plan, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return Plan{}, fmt.Errorf("load plan: %w", err)
	}
	return o.Parse(src), nil
}
