package plan

import "strings"

// Line classifiers. Each takes a line with its leading whitespace removed
// (body) and, where CommonMark cares about it, the column the body starts
// at. They recognise just enough Markdown to find tasks and headings; none of
// them allocates.

const tabStop = 4

// indent returns the column of the first non-blank character, with tabs
// advancing to the next multiple of four as CommonMark specifies.
func indent(s string) (col int, body string) {
	return skipBlank(s, 0)
}

func skipBlank(s string, col int) (int, string) {
	i := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			col += tabStop - col%tabStop
		default:
			return col, s[i:]
		}
	}
	return col, ""
}

// atxHeading recognises "# Title" up to "###### Title". A hash run must be
// followed by a blank or the end of the line, so "#hashtag" and "#1 issue"
// stay text.
func atxHeading(body string) (level int, title string, ok bool) {
	for level < len(body) && body[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	if level < len(body) && body[level] != ' ' && body[level] != '\t' {
		return 0, "", false
	}
	return level, body[level:], true
}

// setextUnderline recognises a run of = (level 1) or - (level 2) with only
// trailing blanks. Whether it makes a heading depends on the line above.
func setextUnderline(body string) (level int, ok bool) {
	t := strings.TrimRight(body, " \t")
	if t == "" {
		return 0, false
	}
	c := t[0]
	if c != '=' && c != '-' {
		return 0, false
	}
	for i := 1; i < len(t); i++ {
		if t[i] != c {
			return 0, false
		}
	}
	if c == '=' {
		return 1, true
	}
	return 2, true
}

// thematicBreak recognises ---, *** and ___ with optional blanks between the
// characters. It must be checked before list items so "* * *" is not a list.
func thematicBreak(body string) bool {
	c := body[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	n := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// fenceOpen recognises ``` and ~~~ fences of any length from three. A
// backtick fence whose info string holds a backtick is inline code instead
// ("```x```" on one line), as in CommonMark.
func fenceOpen(body string) (c byte, n int, ok bool) {
	c = body[0]
	if c != '`' && c != '~' {
		return 0, 0, false
	}
	for n < len(body) && body[n] == c {
		n++
	}
	if n < 3 {
		return 0, 0, false
	}
	if c == '`' && strings.IndexByte(body[n:], '`') >= 0 {
		return 0, 0, false
	}
	return c, n, true
}

// fenceCloses reports whether body closes a fence opened with n characters c:
// the same character, at least as many, nothing but blanks after.
func fenceCloses(body string, c byte, n int) bool {
	m := 0
	for m < len(body) && body[m] == c {
		m++
	}
	return m >= n && strings.TrimRight(body[m:], " \t") == ""
}

// listItem recognises a bullet (- * +) or ordered (1. 1)) list marker
// followed by a blank or the end of the line. contentCol is where the item's
// content starts, which decides whether a later item nests inside it.
func listItem(col int, body string) (contentCol int, rest string, ok bool) {
	w := 0
	switch body[0] {
	case '-', '*', '+':
		w = 1
	default:
		for w < len(body) && w < 9 && body[w] >= '0' && body[w] <= '9' {
			w++
		}
		if w == 0 || w >= len(body) || (body[w] != '.' && body[w] != ')') {
			return 0, "", false
		}
		w++
	}
	if w < len(body) && body[w] != ' ' && body[w] != '\t' {
		return 0, "", false
	}
	after, rest := skipBlank(body[w:], col+w)
	// CommonMark: with no content, or five or more blanks after the marker
	// (indented code inside the item), content starts one column past it.
	if rest == "" || after-(col+w) > 4 {
		return col + w + 1, rest, true
	}
	return after, rest, true
}

// boxResult says what checkbox reads out of a list item's content.
type boxResult int

const (
	noBox    boxResult = iota // no checkbox at all: an ordinary list item
	taskBox                   // a real task
	badBox                    // looks like a checkbox but is not one; problem says why
	emptyBox                  // a valid box with nothing after it
)

// checkbox reads "[ ] text" / "[x] text" at the start of s. Anything bracketed
// that is not a box of blanks and at most one x (dates, versions, links) is
// noBox, so "- [2026-01-29]" stays quiet while "- [  ]" is flagged.
func checkbox(s string) (done bool, text string, res boxResult, problem string) {
	if len(s) < 2 || s[0] != '[' {
		return false, "", noBox, ""
	}
	end := strings.IndexByte(s[:min(len(s), 7)], ']')
	if end < 0 || !looksLikeBox(s[1:end]) {
		return false, "", noBox, ""
	}
	inner, after := s[1:end], s[end+1:]
	if inner != " " && inner != "x" && inner != "X" {
		return false, "", badBox, "checkbox " + s[:end+1] + " is not a task; write [ ] or [x]"
	}
	if after != "" && after[0] != ' ' && after[0] != '\t' {
		return false, "", badBox, "no space after checkbox " + s[:end+1] + "; not counted as a task"
	}
	text = strings.TrimSpace(stripInlineComments(after))
	if text == "" {
		return false, "", emptyBox, "checkbox without text is not counted as a task"
	}
	return inner != " ", text, taskBox, ""
}

// looksLikeBox: blanks plus at most one x. checkbox looks at most five
// characters in, so a long bracketed phrase is never scanned.
func looksLikeBox(inner string) bool {
	xs := 0
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case ' ', '\t':
		case 'x', 'X':
			xs++
		default:
			return false
		}
	}
	return xs <= 1
}

// nearMiss flags text lines that were probably meant as tasks: "-[ ] x" and a
// bare "[ ] x" without a list marker.
func nearMiss(body string) string {
	switch body[0] {
	case '-', '*', '+':
		if _, _, res, _ := checkbox(body[1:]); res == taskBox {
			return "no space between list marker and checkbox; not counted as a task"
		}
	case '[':
		if _, _, res, _ := checkbox(body); res == taskBox {
			return "checkbox without a list marker; not counted as a task"
		}
	}
	return ""
}
