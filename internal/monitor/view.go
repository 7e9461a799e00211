package monitor

import "strings"

// Layout thresholds: two columns of boxed panels need room; below it every
// panel still shows, as titled sections one under another.
const (
	wideMinWidth  = 100
	wideMinHeight = 24
)

// View renders the screen: never wider than the window, never taller.
func (m *Model) View() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	var body []string
	switch m.mode {
	case modeHelp:
		body = m.helpView(w, h-1)
	case modeLog:
		body = m.logView(w, h-1)
	default:
		if w >= wideMinWidth && h >= wideMinHeight {
			body = m.wide(w, h-1)
		} else {
			body = m.compact(w, h-1)
		}
	}
	if p := m.promptLines(w); len(p) > 0 {
		body = append(p, body...)
	}
	lines := make([]string, 0, h)
	for _, l := range body[:min(len(body), h-1)] {
		lines = append(lines, fit(l, w))
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.footer(w))
	return strings.Join(lines, "\n")
}

// compact stacks every panel as a titled section, sharing the lines left
// over by the fixed ones among the activity, the table and the log.
func (m *Model) compact(w, h int) []string {
	loopBody := m.loopLines(w, true)
	breakerBody := m.breakerLines(w, true)
	limitsBody := m.limitsLines(w, true)
	planBody := m.planLines(w)
	rows := m.recentRowsAvailable()
	fixed := 1 + len(loopBody) + 1 + 1 + len(breakerBody) + 1 + len(limitsBody) + 1 + len(planBody) + 2 + 1
	share := allocate(h-fixed,
		[]int{m.activityWant(h), max(rows, 1), max(len(m.snap.Log), 1)},
		[]int{4, 2, 3})
	var out []string
	section := func(title string, body []string) {
		out = append(out, m.rule(title, w))
		out = append(out, body...)
	}
	section(m.loopTitle(), loopBody)
	section(m.iterationTitle(), m.activityLines(w, share[0]))
	section(m.breakerTitle(true), breakerBody)
	section(m.limitsTitle(), limitsBody)
	section(m.planTitle(), planBody)
	section(m.recentTitle(), m.recentLines(w, share[1]+1))
	section(m.logTitle(), m.logTail(w, share[2]))
	return out
}

// wide puts loop and activity on the left, breaker, limits and plan on the
// right, and the table and the log across the whole width below.
func (m *Model) wide(w, h int) []string {
	leftW := w * 11 / 20
	rightW := w - leftW
	in := func(bw int) int { return bw - 4 }
	loopBody := m.loopLines(in(leftW), false)
	limitsBody := m.limitsLines(in(rightW), false)
	planBody := m.planLines(in(rightW))
	const breakerMin = 3
	topMin := (breakerMin + 2) + (len(limitsBody) + 2) + (len(planBody) + 2)
	rows := m.recentRowsAvailable()
	share := allocate(h-topMin-3-2,
		[]int{h, max(rows, 1), max(len(m.snap.Log), 1)},
		[]int{4, 2, 3})
	topH := topMin + share[0]
	breakerH := breakerMin + share[0]

	left := m.box(m.loopTitle(), loopBody, leftW, len(loopBody))
	actH := max(topH-len(left)-2, 0)
	left = append(left, m.box(m.iterationTitle(), m.activityLines(in(leftW), actH), leftW, actH)...)
	right := m.box(m.breakerTitle(false), m.breakerLines(in(rightW), false), rightW, breakerH)
	right = append(right, m.box(m.limitsTitle(), limitsBody, rightW, len(limitsBody))...)
	right = append(right, m.box(m.planTitle(), planBody, rightW, len(planBody))...)

	out := make([]string, 0, h)
	for i := range topH {
		out = append(out, lineAt(left, i, leftW)+lineAt(right, i, rightW))
	}
	out = append(out, m.box(m.recentTitle(), m.recentLines(in(w), share[1]+1), w, share[1]+1)...)
	out = append(out, m.box(m.logTitle(), m.logTail(in(w), share[2]), w, share[2])...)
	return out
}

func lineAt(lines []string, i, w int) string {
	if i < len(lines) {
		return lines[i]
	}
	return strings.Repeat(" ", w)
}

// allocate shares n lines among flexible panels: one each first, in
// order, then the rest by weight, never more than a panel wants.
func allocate(n int, wants, weights []int) []int {
	got := make([]int, len(wants))
	for i := range wants {
		if n > 0 && wants[i] > 0 {
			got[i]++
			n--
		}
	}
	for ; n > 0; n-- {
		best := -1
		for i := range wants {
			if got[i] >= wants[i] || weights[i] <= 0 {
				continue
			}
			if best < 0 || got[i]*weights[best] < got[best]*weights[i] {
				best = i
			}
		}
		if best < 0 {
			break
		}
		got[best]++
	}
	return got
}

// rule is a compact section's title line: "── Title ────".
func (m *Model) rule(title string, w int) string {
	head := m.st.dim.Render("── ") + fit(title, max(w-4, 0)) + " "
	return fit(head+m.st.dim.Render(strings.Repeat("─", max(w-width(head), 0))), w)
}

// box frames body (h lines, cut or filled) in a rounded border w cells wide.
func (m *Model) box(title string, body []string, w, h int) []string {
	if w < 6 {
		return append([]string{fit(title, w)}, body[:min(len(body), h)]...)
	}
	b := m.st.dim
	head := b.Render("╭─ ") + fit(title, w-6) + " "
	out := []string{head + b.Render(strings.Repeat("─", max(w-1-width(head), 0))+"╮")}
	for i := range h {
		line := ""
		if i < len(body) {
			line = body[i]
		}
		out = append(out, b.Render("│")+" "+pad(line, w-4)+" "+b.Render("│"))
	}
	return append(out, b.Render("╰"+strings.Repeat("─", w-2)+"╯"))
}

// footer is the status line: a question, a note, or the keys; the clock on
// the right.
func (m *Model) footer(w int) string {
	var left string
	switch {
	case m.confirm:
		left = m.st.warn.Render("reset the circuit breaker? y/n")
	case m.note != "" && m.noteErr:
		left = m.st.bad.Render(m.note)
	case m.note != "":
		left = m.st.accent.Render(m.note)
	default:
		left = m.keyHints()
	}
	clock := m.now.Format("15:04:05")
	if w < 30 {
		return fit(left, w)
	}
	left = fit(left, w-len(clock)-1)
	return left + strings.Repeat(" ", w-width(left)-len(clock)) + m.st.dim.Render(clock)
}

func (m *Model) keyHints() string {
	pause := "pause"
	if m.snap.Loop.Paused() || m.snap.Loop.PauseRequested {
		pause = "resume"
	}
	keys := [][2]string{{"q", "quit"}, {"p", pause}, {"s", "stop"}, {"r", "reset breaker"}, {"l", "log"}, {"?", "help"}}
	switch m.mode {
	case modeLog:
		keys = [][2]string{{"↑↓", "scroll"}, {"pgup pgdn", "page"}, {"g G", "top end"}, {"l", "back"}, {"q", "quit"}}
	case modeHelp:
		keys = [][2]string{{"any key", "back"}, {"q", "quit"}}
	}
	var b strings.Builder
	for i, kv := range keys {
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(m.st.key.Render(kv[0]) + " " + kv[1])
	}
	return b.String()
}
