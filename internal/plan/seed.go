package plan

import (
	"bytes"
	"strings"
)

// Seed returns src with task as the plan's first open item: under the
// first section heading that is not Optional or Completed, or after the
// title when there is none. Items for which drop is true (the template's
// "replace this item" placeholder) are removed; nothing else is touched.
// The task is one line of plan text: line breaks become spaces, so text
// from a command line can never add headings or items of its own.
func Seed(src []byte, task string, drop func(text string) bool) []byte {
	item := "- [ ] " + OneLine(task)
	lines := strings.SplitAfter(string(src), "\n")
	var out []string
	inserted := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if t, ok := openItem(line); ok && drop != nil && drop(t) {
			continue
		}
		out = append(out, line)
		if inserted || !isSection(line) {
			continue
		}
		// The item goes after the heading's blank line, as the template
		// writes items.
		if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "" {
			out = append(out, lines[i+1])
			i++
		} else if !strings.HasSuffix(line, "\n") {
			out[len(out)-1] += "\n"
		}
		out = append(out, item+"\n")
		inserted = true
	}
	if !inserted {
		return seedWithoutSection(strings.Join(out, ""), item)
	}
	return []byte(strings.Join(out, ""))
}

// seedWithoutSection puts the item after a leading "# " title, or first.
func seedWithoutSection(text, item string) []byte {
	var b bytes.Buffer
	if strings.HasPrefix(text, "# ") {
		title, rest, _ := strings.Cut(text, "\n")
		b.WriteString(title + "\n\n" + item + "\n")
		if rest = strings.TrimLeft(rest, "\n"); rest != "" {
			b.WriteString("\n" + rest)
		}
		return b.Bytes()
	}
	b.WriteString(item + "\n")
	if text != "" {
		b.WriteString("\n" + text)
	}
	return b.Bytes()
}

// OneLine folds text onto one line: runs of white space, line breaks
// included, become one space.
func OneLine(text string) string {
	return strings.Join(strings.Fields(text), " ")
}

// openItem returns the text of an unchecked "- [ ] " item line.
func openItem(line string) (string, bool) {
	t := strings.TrimSpace(line)
	for _, p := range []string{"- [ ] ", "* [ ] ", "+ [ ] "} {
		if rest, ok := strings.CutPrefix(t, p); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// isSection is a "## " heading where new work belongs.
func isSection(line string) bool {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "## ") {
		return false
	}
	title := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(t, "## ")))
	return !strings.HasPrefix(title, "optional") && !strings.HasPrefix(title, "completed") && !strings.HasPrefix(title, "done")
}
