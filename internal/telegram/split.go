package telegram

import (
	"strings"
	"unicode/utf8"
)

// MaxMessage is the longest text Telegram takes in one message. It counts
// UTF-16 code units, so an emoji outside the basic plane counts twice.
const MaxMessage = 4096

// Split cuts text into messages of at most limit UTF-16 units, between
// lines where it can; a line longer than a message is cut at its last
// space that fits, else between characters. No part is empty, and every
// character of text is in a part, in order, but for the line breaks and
// spaces a part ends with.
func Split(text string, limit int) []string {
	if limit < 2 {
		limit = 2 // room for one character of any width
	}
	var out []string
	var cur strings.Builder
	n := 0
	flush := func() {
		if s := strings.TrimLeft(strings.TrimRight(cur.String(), " \n"), "\n"); strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
		cur.Reset()
		n = 0
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		l := units(line)
		if n+l <= limit {
			cur.WriteString(line)
			n += l
			continue
		}
		flush()
		for units(line) > limit {
			head, rest := cutLine(line, limit)
			cur.WriteString(head)
			flush()
			line = rest
		}
		cur.WriteString(line)
		n = units(line)
	}
	flush()
	return out
}

// cutLine splits a line at most limit units into its head: at the last
// space in the second half of the head, else at the limit.
func cutLine(line string, limit int) (head, rest string) {
	end, n := 0, 0
	for end < len(line) {
		r, size := utf8.DecodeRuneInString(line[end:])
		if n+runeUnits(r) > limit {
			break
		}
		n += runeUnits(r)
		end += size
	}
	if sp := strings.LastIndexByte(line[:end], ' '); sp > end/2 {
		end = sp + 1
	}
	return line[:end], line[end:]
}

func units(s string) int {
	n := 0
	for _, r := range s {
		n += runeUnits(r)
	}
	return n
}

func runeUnits(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
