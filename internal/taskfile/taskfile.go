// Package taskfile reads and writes a fleet task's hand-off file,
// RALPH_HOME/handoffs/<session>-task.md (DESIGN.md, "The fleet"):
//
//	# Task: Implement user authentication
//
//	**Session:** 5
//	**Created:** 2026-01-22 17:30
//	**Status:** IN_PROGRESS
//
//	## Checklist
//
//	- [x] Create user model
//	- [ ] Add logout endpoint
//
//	## RALPH_STATUS
//
//	RALPH_STATUS:
//	STATUS: IN_PROGRESS
//	EXIT_SIGNAL: false
//
// The agent owns the checklist (it breaks the title into items and ticks
// them); ralph owns the **Status:** line and the RALPH_STATUS section,
// which it rewrites after every iteration without touching the rest (but
// for line endings, which become \n), whatever the agent did to it. The package is pure: bytes in, bytes
// out; the checklist is read with the plan parser, so a task ends exactly
// as a finished fix_plan.md does.
package taskfile

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"ralph/internal/plan"
)

// CreatedLayout is the format of the **Created:** line.
const CreatedLayout = "2006-01-02 15:04"

// File is a parsed task file.
type File struct {
	Title   string
	Session string
	Created time.Time // zero when the line is missing
	Status  string
	// Checklist is the parsed checklist (every checkbox of the file outside
	// the RALPH_STATUS section).
	Checklist plan.Plan
	// Block is the RALPH_STATUS section's KEY: value fields, in order.
	Block []Field
}

// Field is one KEY: value line of the status section.
type Field struct{ Key, Value string }

// Error is a problem with a task file at a line.
type Error struct {
	Name string // the file's name, for the message
	Line int    // 1-based; 0 for the whole file
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Name, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// New renders a fresh task file.
func New(title, session string, created time.Time) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Task: %s\n\n", oneLine(title))
	fmt.Fprintf(&b, "**Session:** %s\n", oneLine(session))
	fmt.Fprintf(&b, "**Created:** %s\n", created.Format(CreatedLayout))
	b.WriteString("**Status:** QUEUED\n\n")
	b.WriteString("## Checklist\n\n")
	b.WriteString("<!-- Break the task into small items here, one `- [ ] item` per line, and tick them as you finish them. -->\n\n")
	b.WriteString("## RALPH_STATUS\n\n")
	return b.Bytes()
}

// oneLine keeps a value on its line: a title with a newline must not be
// able to add a heading or a status of its own.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Parse reads a task file; name is used in errors.
func Parse(name string, data []byte) (File, error) {
	var f File
	lines := splitLines(data)
	inStatus := false
	titleSeen := false
	statusStart := -1
	for i, l := range lines {
		n := i + 1
		t := strings.TrimSpace(l)
		if h, ok := heading(t); ok {
			inStatus = h == "RALPH_STATUS"
			if inStatus {
				statusStart = i
			}
			if title, ok := strings.CutPrefix(t, "# Task:"); ok && !titleSeen {
				f.Title, titleSeen = strings.TrimSpace(title), true
			}
			continue
		}
		if inStatus {
			k, v, ok := field(t)
			if ok && k != "RALPH_STATUS" {
				f.Block = append(f.Block, Field{k, v})
			}
			continue
		}
		if k, v, ok := meta(t); ok {
			switch k {
			case "Session":
				f.Session = v
			case "Status":
				f.Status = v
			case "Created":
				at, err := time.ParseInLocation(CreatedLayout, v, time.UTC)
				if err != nil {
					return f, &Error{name, n, fmt.Sprintf("**Created:** %q is not a time like %s", v, CreatedLayout)}
				}
				f.Created = at
			}
		}
	}
	if !titleSeen {
		return f, &Error{name, 0, "no `# Task: TITLE` heading"}
	}
	// The checklist: everything before the status section, so checkboxes
	// echoed in a status block never count.
	body := data
	if statusStart >= 0 {
		body = []byte(strings.Join(lines[:statusStart], "\n"))
	}
	f.Checklist = plan.Parse(body)
	return f, nil
}

// Update rewrites the **Status:** line and the RALPH_STATUS section and
// leaves every other byte as it was. A file without them gets them: the
// status line after the title block, the section at the end.
func Update(data []byte, status string, block []Field) []byte {
	lines := splitLines(data)
	status = oneLine(status)
	statusLine := "**Status:** " + status
	var out []string
	replaced := false
	i := 0
	for ; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if h, ok := heading(t); ok && h == "RALPH_STATUS" {
			break
		}
		if k, _, ok := meta(t); ok && k == "Status" && !replaced {
			out = append(out, statusLine)
			replaced = true
			continue
		}
		out = append(out, lines[i])
	}
	if !replaced {
		out = insertStatus(out, statusLine)
	}
	// Skip the old section up to the next heading of level 1 or 2.
	rest := []string{}
	if i < len(lines) {
		j := i + 1
		for ; j < len(lines); j++ {
			if lvl := headingLevel(strings.TrimSpace(lines[j])); lvl == 1 || lvl == 2 {
				break
			}
		}
		rest = lines[j:]
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	out = append(out, "", "## RALPH_STATUS", "", "RALPH_STATUS:")
	for _, f := range block {
		k := strings.ToUpper(oneLine(f.Key))
		if k == "" || strings.ContainsAny(k, ":#") {
			continue
		}
		out = append(out, k+": "+oneLine(f.Value))
	}
	if len(rest) > 0 {
		out = append(out, "")
		out = append(out, rest...)
	}
	s := strings.Join(out, "\n")
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return []byte(s)
}

// insertStatus puts the status line after the last metadata line, or after
// the title when there is none.
func insertStatus(lines []string, statusLine string) []string {
	at := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if _, _, ok := meta(t); ok {
			at = i
		}
		if strings.HasPrefix(t, "# Task:") && at < 0 {
			at = i
		}
	}
	if at < 0 {
		return append([]string{statusLine, ""}, lines...)
	}
	out := append([]string{}, lines[:at+1]...)
	if strings.HasPrefix(strings.TrimSpace(lines[at]), "# Task:") {
		out = append(out, "")
	}
	out = append(out, statusLine)
	return append(out, lines[at+1:]...)
}

// splitLines splits at newlines; carriage returns at line ends go (a file
// written on Windows comes back with \n endings).
func splitLines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}

// heading returns a heading's text ("RALPH_STATUS" for "## RALPH_STATUS").
func heading(t string) (string, bool) {
	if headingLevel(t) == 0 {
		return "", false
	}
	return strings.TrimSpace(strings.TrimLeft(t, "#")), true
}

func headingLevel(t string) int {
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ') {
		return 0
	}
	return n
}

// meta reads a `**Key:** value` line.
func meta(t string) (key, value string, ok bool) {
	rest, ok := strings.CutPrefix(t, "**")
	if !ok {
		return "", "", false
	}
	key, value, ok = strings.Cut(rest, ":**")
	if !ok || key == "" || strings.ContainsAny(key, "*") {
		return "", "", false
	}
	return key, strings.TrimSpace(value), true
}

// field reads a `KEY: value` line of the status section.
func field(t string) (key, value string, ok bool) {
	key, value, ok = strings.Cut(t, ":")
	if !ok {
		return "", "", false
	}
	key = strings.TrimSpace(key)
	if key == "" || strings.ToUpper(key) != key || strings.ContainsAny(key, " \t*#") {
		return "", "", false
	}
	return key, strings.TrimSpace(value), true
}

// AddItem adds an open "- [ ] item" at the end of the checklist (a
// "## Checklist" section made before "## RALPH_STATUS" when there is none):
// a follow-up round of a task whose items are all ticked has work to do,
// so that the loop does not take the plan for finished at its start.
func AddItem(data []byte, item string) []byte {
	lines := splitLines(data)
	line := "- [ ] " + oneLine(item)
	in, at := false, -1
	for i, l := range lines {
		h, ok := heading(strings.TrimSpace(l))
		switch {
		case ok && headingLevel(strings.TrimSpace(l)) == 2 && strings.EqualFold(h, "Checklist"):
			in, at = true, i+1
		case ok && in:
			in = false
		case in && strings.TrimSpace(l) != "":
			at = i + 1
		}
	}
	if at < 0 {
		at = len(lines)
		for i, l := range lines {
			if h, ok := heading(strings.TrimSpace(l)); ok && strings.EqualFold(h, "RALPH_STATUS") {
				at = i
				break
			}
		}
		lines = slices.Insert(lines, at, "## Checklist", "", line, "")
	} else {
		lines = slices.Insert(lines, at, line)
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}
