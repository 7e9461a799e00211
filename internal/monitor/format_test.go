package monitor

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// TestWidthAgreesWithAnsi: the fast path must never disagree with the
// real measure, or lines would overflow the window.
func TestWidthAgreesWithAnsi(t *testing.T) {
	cases := []string{
		"", "plain", "\x1b[1;36mq\x1b[0m quit", "── Loop ─╮", "█████░░░", "a · b … c – d → e",
		"é ü ß", "⚡ Read x", "✖ failed", "漢字", "e\u0301", "soft\u00adhyphen", "zero\u200bwidth",
		"\x1b[2m╰──╯\x1b[0m", "tab\tx", "\x1b]8;;http://x\x07link\x1b]8;;\x07",
	}
	for r := rune(0xa0); r < 0x2600; r++ {
		if narrow(r) {
			cases = append(cases, string(r))
		}
	}
	for _, c := range cases {
		if got, want := width(c), ansi.StringWidth(c); got != want {
			t.Errorf("width(%q) = %d, ansi says %d", c, got, want)
		}
	}
}

func TestFormats(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", -time.Second: "0s", 45 * time.Second: "45s", 182 * time.Second: "3m02s",
		62 * time.Minute: "1h02m", 51 * time.Hour: "2d03h",
	} {
		if got := fmtDur(d); got != want {
			t.Errorf("fmtDur(%v) = %q, want %q", d, got, want)
		}
	}
	if got := fmtCountdown(time.Hour + 2*time.Minute + 3*time.Second); got != "1h02m03s" {
		t.Errorf("countdown %q", got)
	}
	for n, want := range map[int64]string{950: "950", 1234: "1.2k", 45_000: "45k", 1_234_000: "1.2M", 45_000_000: "45M", 3_400_000_000: "3.4G"} {
		if got := fmtCount(n); got != want {
			t.Errorf("fmtCount(%d) = %q, want %q", n, got, want)
		}
	}
	if got := clean("a\x1b[31mred\x1b[0m\tb\x07c\u0085"); got != "ared bc" {
		t.Errorf("clean %q", got)
	}
	if got := pad("漢字漢字", 5); ansi.StringWidth(got) != 5 || !strings.HasSuffix(got, "…") {
		t.Errorf("pad %q", got)
	}
}
