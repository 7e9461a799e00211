// Package termsafe makes text from agents safe to print on a terminal. An
// agent's output is not ralph's to interpret: an OSC sequence in it could
// retitle the window or, with OSC 52, write the user's clipboard, and CSI
// sequences can hide or rewrite what ralph printed before. Every printer of
// agent text (ralph run's lines, ralph logs, ralph status) passes it through
// String first; the agents' parsers stay untouched.
package termsafe

import (
	"io"
	"strings"
	"unicode/utf8"
)

// String removes escape sequences (CSI, OSC, DCS and the other ESC forms)
// and control characters other than newline and tab from s. An OSC or DCS
// left unterminated is dropped to the end of s. Invalid UTF-8 bytes become
// U+FFFD, since a terminal may read them as C1 controls.
func String(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			i += skipEscape(s[i+1:]) + 1
			continue
		case r == 0x9b: // C1 CSI
			i += size + skipCSI(s[i+size:])
			continue
		case r == 0x9d || r == 0x90 || r == 0x9e || r == 0x9f: // C1 OSC, DCS, PM, APC
			i += size + skipString(s[i+size:])
			continue
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			// other controls: bell, backspace, carriage return…
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c >= 0x80 {
			if c >= 0x80 {
				r, size := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError || (r >= 0x80 && r < 0xa0) {
					return false
				}
				i += size - 1
				continue
			}
			return false
		}
	}
	return true
}

// skipEscape returns how many bytes after an ESC belong to its sequence.
func skipEscape(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '[':
		return 1 + skipCSI(s[1:])
	case ']', 'P', '^', '_', 'X':
		return 1 + skipString(s[1:])
	}
	// Two-character forms (ESC 7, ESC c…) and charset selection (ESC ( B).
	if s[0] >= 0x20 && s[0] <= 0x2f && len(s) > 1 {
		return 2
	}
	return 1
}

// skipCSI skips parameters and intermediates up to the final byte.
func skipCSI(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
		if s[i] < 0x20 || s[i] > 0x7e {
			return i
		}
	}
	return len(s)
}

// skipString skips an OSC/DCS body up to BEL, ST (ESC \) or C1 ST.
func skipString(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
	}
	return len(s)
}

// Writer strips escape sequences from what is written through it. Callers
// write whole lines or whole renderings, so a sequence is not split between
// two writes; one that is loses its tail to the next write's text.
type Writer struct{ W io.Writer }

func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
