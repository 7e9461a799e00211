package monitor

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// fmtDur is a short elapsed time: 45s, 3m02s, 1h02m, 2d03h.
func fmtDur(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// fmtCountdown keeps the seconds at every size: a countdown must move.
func fmtCountdown(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	if d < time.Hour {
		return fmtDur(d)
	}
	h := int(d.Hours())
	return fmt.Sprintf("%dh%02dm%02ds", h, int(d.Minutes())%60, int(d.Seconds())%60)
}

// fmtCount shortens big numbers: 950, 1.2k, 45k, 1.2M.
func fmtCount(n int64) string {
	f := float64(n)
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", f/1e3)
	case n < 1_000_000:
		return fmt.Sprintf("%.0fk", f/1e3)
	case n < 10_000_000:
		return fmt.Sprintf("%.1fM", f/1e6)
	case n < 1_000_000_000:
		return fmt.Sprintf("%.0fM", f/1e6)
	default:
		return fmt.Sprintf("%.1fG", f/1e9)
	}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func fmtCost(usd float64) string { return fmt.Sprintf("$%.2f", usd) }

// fmtClock shows t on the dashboard's clock (now's location).
func fmtClock(t, now time.Time) string { return t.In(now.Location()).Format("15:04:05") }

// fmtAt is a clock time with how far it is from now: "15:00:00, in 12m".
func fmtAt(t, now time.Time) string {
	if d := t.Sub(now); d >= 0 {
		return fmtClock(t, now) + ", in " + fmtDur(d)
	}
	return fmtClock(t, now) + ", " + fmtDur(now.Sub(t)) + " ago"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// clean makes outside text safe for one terminal line: escape sequences
// and control characters would move the cursor and break the layout.
func clean(s string) string {
	s = ansi.Strip(s)
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n':
			return ' '
		case isControl(r):
			return -1
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// width is how many cells s takes, escape codes excluded. The dashboard's
// own lines hold ASCII, its styles' SGR codes, and box, bar and punctuation
// characters one cell wide; those are counted here, because full grapheme
// segmentation of every line on every redraw was most of an idle redraw's
// cost. Anything else is measured properly.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
			continue
		case c >= 0x20 && c < 0x7f:
			n++
			i++
			continue
		case c < 0x80:
			return ansi.StringWidth(s)
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !narrow(r) {
			return ansi.StringWidth(s)
		}
		n++
		i += size
	}
	return n
}

// narrow runes are one cell wide and never combine: Latin-1 letters, the
// general punctuation in use (dashes, "…", "·"), arrows, box drawing and
// block elements.
func narrow(r rune) bool {
	switch {
	case r >= 0xa0 && r <= 0xff:
		return r != 0xad // soft hyphen
	case r >= 0x2010 && r <= 0x2027, r >= 0x2030 && r <= 0x205e:
		return true
	case r >= 0x2190 && r <= 0x21ff, r >= 0x2500 && r <= 0x259f:
		return true
	}
	return false
}

// fit cuts a (possibly styled) line to w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// pad cuts or fills a line to exactly w cells.
func pad(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := width(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = width(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// wrap breaks plain text into lines of at most w cells.
func wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	if width(s) <= w {
		return []string{s}
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}
