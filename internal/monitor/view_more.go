package monitor

import (
	"fmt"
	"strings"

	"ralph/internal/loop"
)

func (m *Model) recentTitle() string {
	t := m.st.title.Render("Recent iterations")
	if n := m.snap.RecentNote; n != "" {
		t += m.st.warn.Render(" · " + n)
	}
	return t
}

func (m *Model) recentRowsAvailable() int { return len(m.snap.Recent) }

// recentLines is the table, header included, in at most n lines, newest
// iteration first.
func (m *Model) recentLines(w, n int) []string {
	if n <= 0 {
		return nil
	}
	rows := m.snap.Recent
	if len(rows) == 0 {
		return []string{m.st.dim.Render("no iterations yet")}
	}
	numW := 3
	for _, r := range rows {
		numW = max(numW, len(fmt.Sprint(r.Loop)))
	}
	head := fmt.Sprintf("%*s %6s %5s %6s %6s %-11s %s", numW, "#", "dur", "files", "tokens", "cost", "status", "decision")
	out := []string{fit(m.st.dim.Render(head), w)}
	for i := len(rows) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, fit(m.recentRow(rows[i], numW), w))
	}
	return out
}

func (m *Model) recentRow(r loop.Metrics, numW int) string {
	status := clean(r.Status)
	style := m.st.dim
	switch {
	case r.TimedOut:
		status, style = "timed out", m.st.bad
	case r.UsageLimit:
		status, style = "usage limit", m.st.warn
	case r.Failed:
		status, style = "failed", m.st.bad
	case r.Progress:
		style = m.st.ok
	}
	status = style.Render(fmt.Sprintf("%-11s", fit(orDash(status), 11)))
	decision := clean(orDash(r.Decision))
	if strings.HasPrefix(decision, "stop:") {
		decision = m.st.warn.Render(decision)
	}
	return fmt.Sprintf("%*d %6s %5d %6s %6s ", numW, r.Loop, fmtDur(msDuration(r.DurationMS)),
		r.FilesChanged, fmtCount(r.InputTokens+r.OutputTokens), fmtCost(r.CostUSD)) + status + " " + decision
}

func (m *Model) logTitle() string {
	t := m.st.title.Render("ralph.log")
	if n := m.snap.LogNote; n != "" {
		t += m.st.warn.Render(" · " + n)
	}
	return t
}

// logTail is the last h lines of ralph.log, cut to w.
func (m *Model) logTail(w, h int) []string {
	if h <= 0 {
		return nil
	}
	lines := m.snap.Log
	if len(lines) == 0 {
		return []string{m.st.dim.Render("nothing logged yet")}
	}
	lines = lines[max(len(lines)-h, 0):]
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fit(clean(l), w)
	}
	return out
}

func (m *Model) logHeight() int { return max(m.height-2, 1) }

// logLines is ralph.log wrapped to the window, for the full log view. The
// wrapping is kept until the log or the width changes: scrolling redraws
// often, and a long log takes a while to wrap.
func (m *Model) logLines() []string {
	src, w := m.snap.Log, m.width
	c := &m.logCache
	if c.w == w && len(c.src) == len(src) && (len(src) == 0 || &c.src[0] == &src[0]) {
		return c.lines
	}
	c.src, c.w, c.lines = src, w, nil
	for _, l := range src {
		c.lines = append(c.lines, wrap(clean(l), w)...)
	}
	return c.lines
}

// wrapCache holds the full log view's wrapped lines.
type wrapCache struct {
	src   []string
	w     int
	lines []string
}

func (m *Model) logView(w, h int) []string {
	lines := m.logLines()
	body := max(h-1, 0)
	from := min(m.logOff, len(lines))
	to := min(from+body, len(lines))
	where := "empty"
	if len(lines) > 0 {
		where = fmt.Sprintf("%d–%d of %d", from+1, to, len(lines))
	}
	title := m.st.title.Render("ralph.log") + m.st.dim.Render(" · lines "+where)
	out := []string{m.rule(title, w)}
	if m.snap.LogNote != "" {
		out = append(out, m.st.warn.Render(m.snap.LogNote))
	}
	return append(out, lines[from:to]...)
}

var helpText = [][2]string{
	{"q", "quit the view (an attached loop keeps running)"},
	{"ctrl+c", "quit the view"},
	{"p", "pause after the current iteration, or resume"},
	{"s", "stop after the current iteration"},
	{"r", "reset an open circuit breaker (asks first)"},
	{"l", "full log: ↑↓ j k, pgup pgdn, g G; l or esc back"},
	{"?", "this help; any key closes it"},
	{"", ""},
	{"Loop", "state, loop count, last action or exit reason, elapsed"},
	{"Iteration", "the running agent call: its text and ⚡ tool calls"},
	{"Breaker", "state, counters against thresholds, why it opened"},
	{"Limits", "calls and tokens in the sliding hour, next free slot,"},
	{"", "usage-limit countdown"},
	{"Plan", "checked tasks of fix_plan.md"},
	{"Recent", "the last iterations from logs/metrics.jsonl"},
	{"ralph.log", "the end of the loop's log"},
}

func (m *Model) helpView(w, h int) []string {
	var body []string
	for _, kv := range helpText {
		if kv[0] == "" && kv[1] == "" {
			body = append(body, "")
			continue
		}
		body = append(body, m.st.key.Render(fmt.Sprintf("%-10s", kv[0]))+" "+kv[1])
	}
	title := m.st.title.Render("Help") + m.st.dim.Render(" · keys and panels")
	if w >= 40 && h >= len(body)+2 {
		bw := min(w, 76)
		return m.box(title, body, bw, len(body))
	}
	return append([]string{m.rule(title, w)}, body...)
}
