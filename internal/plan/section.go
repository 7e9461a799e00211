package plan

import (
	"strings"
	"unicode"
)

// sectionNames is a list of section names, normalised once per parse so
// every heading costs one normalisation and a few prefix checks.
type sectionNames []string

func newSectionNames(names []string) sectionNames {
	out := make(sectionNames, 0, len(names))
	for _, n := range names {
		// An empty name would match nothing useful and, worse, could be
		// mistaken for "match every untitled heading".
		if k := normTitle(n); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// match takes a normalised title. The prefix rule lets "Optional Features"
// and "Future (v2)" match while "Futures" and "Future-proofing" do not: a
// hyphen or a letter after the name usually means a different word.
func (s sectionNames) match(title string) bool {
	for _, n := range s {
		if title == n {
			return true
		}
		if len(title) > len(n) && strings.HasPrefix(title, n) {
			switch title[len(n)] {
			case ' ', ':', '(':
				return true
			}
		}
	}
	return false
}

// normTitle reduces a heading title, or a configured section name, to the
// form the two are compared in. Both go through the same function, so a
// configured "nice to have:" still matches "## 🎁 Nice to Have".
func normTitle(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '*', '_', '`', '~':
			return -1 // emphasis and code markers are decoration in a title
		}
		if unicode.IsSpace(r) {
			return ' '
		}
		return unicode.ToLower(r)
	}, s)
	s = strings.TrimLeftFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	s = strings.TrimRightFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != ')' && r != ']'
	})
	return strings.Join(strings.Fields(s), " ")
}

// cleanHeading turns the raw text of a heading into the Section shown to
// users: inline comments and the optional closing #s of an ATX heading go,
// emoji and markup stay because they are part of what the author wrote.
func cleanHeading(s string) string {
	s = strings.TrimSpace(stripInlineComments(s))
	// "## Title ##": the closing run only counts when a space precedes it,
	// so "## C#" keeps its hash.
	t := strings.TrimRight(s, "#")
	if t == "" {
		return ""
	}
	if len(t) < len(s) && (strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		s = strings.TrimSpace(t)
	}
	return s
}

// stripInlineComments removes <!-- ... --> spans; an unterminated one runs to
// the end of the line, the way it would hide the rest of the text on GitHub.
// It builds the result once: a line with thousands of comments must not cost
// a copy per comment.
func stripInlineComments(s string) string {
	i := strings.Index(s, "<!--")
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		b.WriteString(s[:i])
		j := strings.Index(s[i+4:], "-->")
		if j < 0 {
			return b.String()
		}
		s = s[i+4+j+3:]
		i = strings.Index(s, "<!--")
	}
	b.WriteString(s)
	return b.String()
}
