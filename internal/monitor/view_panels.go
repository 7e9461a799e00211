package monitor

import (
	"fmt"
	"strings"

	"ralph/internal/agent"
	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/reason"
)

func (m *Model) loopTitle() string {
	t := m.st.title.Render("Loop")
	if m.opts.Title != "" {
		t += m.st.dim.Render(" · " + clean(m.opts.Title))
	}
	return t
}

// loopState is the loop's state in a few words, styled.
func (m *Model) loopState() string {
	l, s := m.snap.Loop, m.st
	var state string
	switch {
	case !m.have:
		return s.dim.Render("loading…")
	case !l.Known && l.Note != "":
		return s.warn.Render("— (" + l.Note + ")")
	case !l.Known:
		return s.dim.Render("no loop has run here yet")
	case l.Dead:
		return s.bad.Render("not running") + s.dim.Render(" (last seen "+fmtAt(l.Status.Timestamp, m.now)+")")
	case l.Paused():
		state = s.warn.Render("paused") + s.dim.Render(" (p resumes)")
	case l.Active():
		state = s.ok.Render(clean(l.Status.Status))
	default:
		state = s.dim.Render(orDash(clean(l.Status.Status)))
		if l.PauseRequested {
			state += s.warn.Render(" · the next run starts paused")
		}
		return state
	}
	switch {
	case l.StopRequested:
		state += s.warn.Render(" · stopping after this iteration")
	case l.PauseRequested && !l.Paused():
		state += s.warn.Render(" · pausing after this iteration")
	}
	return state
}

// loopAction is what the loop does or why it ended.
func (m *Model) loopAction() (label, text string) {
	l := m.snap.Loop
	st := l.Status
	switch {
	case !l.Known:
		return "action", "—"
	case l.Active() && st.Wait != nil:
		left := st.Wait.Until.Sub(m.now)
		t := m.st.warn.Render(fmt.Sprintf("%s · %s left", clean(st.Wait.Kind), fmtCountdown(left)))
		t += m.st.dim.Render(" (until " + fmtClock(st.Wait.Until, m.now) + ")")
		return "waiting", t
	case st.ExitReason != "" && !l.Active():
		return "exit", m.exitStyle(st.ExitReason).Render(clean(st.ExitReason))
	case l.Dead:
		return "last", clean(orDash(st.LastAction))
	default:
		return "action", clean(orDash(st.LastAction))
	}
}

// exitStyle tells a successful end from one that needs the user.
func (m *Model) exitStyle(r string) paint {
	switch why := reason.Reason(r); {
	case why.Success():
		return m.st.ok
	case why == reason.Interrupted || why.ExitCode() == reason.MaxLoops.ExitCode():
		return m.st.warn
	}
	return m.st.bad
}

func (m *Model) loopElapsed() string {
	st := m.snap.Loop.Status
	if st.StartedAt.IsZero() {
		return "—"
	}
	end := m.now
	if !m.snap.Loop.Active() {
		end = st.Timestamp
	}
	return fmtDur(end.Sub(st.StartedAt))
}

func (m *Model) loopStarted() string {
	st := m.snap.Loop.Status
	if st.StartedAt.IsZero() {
		return ""
	}
	s := " · started " + fmtClock(st.StartedAt, m.now)
	if st.PID > 0 {
		s += fmt.Sprintf(" · pid %d", st.PID)
	}
	return m.st.dim.Render(s)
}

func (m *Model) loopTotals() string {
	t := m.snap.Loop.Status.Totals
	s := fmtCost(t.CostUSD) + " · " + fmtCount(t.InputTokens+t.OutputTokens) + " tokens"
	if a := m.snap.Loop.Status.Agent; a != "" {
		s += " · " + clean(a)
	}
	return s
}

func (m *Model) loopLines(w int, compact bool) []string {
	l := m.snap.Loop
	label, action := m.loopAction()
	if compact {
		first := m.loopState()
		if l.Known {
			first += m.st.dim.Render(fmt.Sprintf(" · loop %d · elapsed %s · ", l.Number(), m.loopElapsed())) + m.loopTotals()
		}
		return []string{fit(first, w), fit(m.st.dim.Render(label+": ")+action, w)}
	}
	kv := func(k, v string) string { return fit(m.st.dim.Render(fmt.Sprintf("%-8s", k))+v, w) }
	if !l.Known {
		return []string{kv("state", m.loopState()), kv("loop", "—"), kv(label, action), kv("totals", "—")}
	}
	return []string{
		kv("state", m.loopState()),
		kv("loop", fmt.Sprintf("%d · elapsed %s", l.Number(), m.loopElapsed())+m.loopStarted()),
		kv(label, action),
		kv("totals", m.loopTotals()),
	}
}

func (m *Model) iterationTitle() string {
	l := m.snap.Loop
	switch {
	case l.Running():
		return m.st.title.Render(fmt.Sprintf("Iteration %d", l.Iteration())) +
			m.st.dim.Render(" · "+fmtDur(m.now.Sub(l.Status.Timestamp)))
	case len(m.act.events) > 0:
		return m.st.title.Render("Last iteration")
	}
	return m.st.title.Render("Iteration")
}

// activityWant is how many lines the activity pane could use: all it can
// get while an agent works, one line otherwise.
func (m *Model) activityWant(h int) int {
	if m.snap.Loop.Running() || len(m.act.events) > 0 {
		return h
	}
	return 1
}

// activityLines renders the newest live events into h lines of width w,
// oldest at the top, so new output appears at the bottom as in a terminal.
func (m *Model) activityLines(w, h int) []string {
	if h <= 0 {
		return nil
	}
	evs := m.act.last()
	if len(evs) == 0 {
		msg := "no iteration running"
		switch l := m.snap.Loop; {
		case l.Running():
			msg = "waiting for the agent's output…"
		case l.Active():
			msg = "between iterations"
		}
		return []string{m.st.dim.Render(msg)}
	}
	var rev []string // newest line first
	for i := len(evs) - 1; i >= 0 && len(rev) < h; i-- {
		lines := m.eventLines(evs[i], w)
		for j := len(lines) - 1; j >= 0 && len(rev) < h; j-- {
			rev = append(rev, lines[j])
		}
	}
	out := make([]string, len(rev))
	for i, l := range rev {
		out[len(rev)-1-i] = l
	}
	return out
}

func (m *Model) eventLines(ev agent.LiveEvent, w int) []string {
	switch ev.Kind {
	case agent.LiveTool:
		s := "⚡ " + clean(ev.Tool)
		if ev.Target != "" {
			s += " " + clean(ev.Target)
		}
		return []string{m.st.accent.Render(fit(s, w))}
	case agent.LiveOutput:
		return []string{m.st.dim.Render(fit(clean(ev.Text), w))}
	}
	text := ev.Text
	if ev.Kind == agent.LiveError {
		text = "✖ " + text
	}
	var out []string
	for _, para := range strings.Split(text, "\n") {
		para = strings.TrimRight(clean(para), " ")
		if strings.TrimSpace(para) == "" {
			continue
		}
		for _, l := range wrap(para, w) {
			l = fit(l, w)
			if ev.Kind == agent.LiveError {
				l = m.st.bad.Render(l)
			}
			out = append(out, l)
		}
	}
	return out
}

func (m *Model) breakerTitle(compact bool) string {
	b := m.snap.Breaker
	t := m.st.title.Render("Circuit breaker")
	if !b.Known {
		return t
	}
	s := b.State
	state := string(s.Status)
	switch s.Status {
	case breaker.Closed:
		state = m.st.ok.Render(state)
	case breaker.HalfOpen:
		state = m.st.warn.Render(state)
	case breaker.Open:
		state = m.st.bad.Render(state)
	default:
		state = orDash(clean(state))
	}
	t += m.st.dim.Render(" · ") + state
	if compact && s.Status != breaker.Closed && s.Message != "" {
		t += m.st.dim.Render(": " + clean(s.Message))
	}
	return t
}

func (m *Model) breakerLines(w int, compact bool) []string {
	b := m.snap.Breaker
	if !b.Known {
		return []string{fit(m.st.warn.Render(orDash(b.Note)), w)}
	}
	s, th := b.State, b.Thresholds
	if b.Summary {
		l := m.st.dim.Render("counters unknown (no " + ".circuit_breaker_state)")
		if compact || s.Message == "" {
			return []string{fit(l, w)}
		}
		return append([]string{fit(l, w)}, wrap(clean(s.Message), w)...)
	}
	count := func(name string, n, limit int) string {
		lim := "off"
		if limit > 0 {
			lim = fmt.Sprint(limit)
		}
		v := fmt.Sprintf("%d/%s", n, lim)
		if limit > 0 && n >= limit-1 && n > 0 {
			v = m.st.warn.Render(v)
		}
		return m.st.dim.Render(name+" ") + v
	}
	sep := m.st.dim.Render(" · ")
	a := count("no progress", s.NoProgress, th.NoProgress) + sep + count("same error", s.SameError, th.SameError)
	c := count("denials", s.PermissionDenials, th.PermissionDenial) + sep + count("failures", s.Failures, th.Failure)
	var retry string
	at := b.ResumeAt()
	if s.Status == breaker.Open && !at.IsZero() {
		retry = "retry after " + fmtAt(at, m.now)
	}
	if compact {
		l := a + sep + c
		if retry != "" {
			l += sep + m.st.warn.Render("retry in "+fmtDur(at.Sub(m.now)))
		}
		return []string{fit(l, w)}
	}
	out := []string{fit(a, w), fit(c+m.st.dim.Render(fmt.Sprintf(" · opened %d×", s.TotalOpens)), w)}
	if retry != "" {
		out = append(out, fit(m.st.warn.Render(retry), w))
	}
	if s.Status != breaker.Closed && s.Message != "" {
		for _, l := range wrap(clean(s.Message), w) {
			out = append(out, fit(l, w))
		}
	}
	if len(s.DeniedTools) > 0 {
		out = append(out, fit(m.st.dim.Render("denied: ")+clean(strings.Join(s.DeniedTools, ", ")), w))
	}
	for _, e := range s.ErrorSample {
		out = append(out, fit(m.st.dim.Render("  "+clean(e)), w))
	}
	// The box shows as much of the history as it has room for.
	for i := len(s.History) - 1; i >= 0; i-- {
		t := s.History[i]
		l := fmt.Sprintf("%s loop %d %s→%s ", fmtClock(t.At, m.now), t.Loop, t.From, t.To)
		out = append(out, fit(m.st.dim.Render(l)+clean(t.Message), w))
	}
	return out
}

func (m *Model) limitsTitle() string {
	return m.st.title.Render("Limits") + m.st.dim.Render(" · sliding hour")
}

func (m *Model) limitsLines(w int, compact bool) []string {
	li := m.snap.Limits
	if !li.Known {
		return []string{fit(m.st.warn.Render(orDash(li.Note)), w), ""}
	}
	var last string
	l := m.snap.Loop
	switch {
	case l.Active() && l.Status.Wait != nil && l.Status.Wait.Kind == loop.WaitUsageLimit:
		u := l.Status.Wait.Until
		last = m.st.warn.Render("usage limit · resets in "+fmtCountdown(u.Sub(m.now))) +
			m.st.dim.Render(" (at "+fmtClock(u, m.now)+")")
	case !li.NextFree.IsZero() && li.NextFree.After(m.now):
		last = m.st.warn.Render("next free slot " + fmtAt(li.NextFree, m.now))
	default:
		last = m.st.dim.Render("next free slot: now")
	}
	if li.Note != "" {
		last += m.st.warn.Render(" · " + li.Note)
	}
	if compact && w >= 60 {
		half := (w - 2) / 2
		return []string{
			m.meter("calls", int64(li.Calls), int64(li.Limits.MaxCallsPerHour), half, fmtInt) + "  " +
				m.meter("tokens", li.Tokens, li.Limits.MaxTokensPerHour, w-2-half, fmtCount),
			fit(last, w),
		}
	}
	return []string{
		m.meter("calls ", int64(li.Calls), int64(li.Limits.MaxCallsPerHour), w, fmtInt),
		m.meter("tokens", li.Tokens, li.Limits.MaxTokensPerHour, w, fmtCount),
		fit(last, w),
	}
}

func fmtInt(n int64) string { return fmt.Sprint(n) }

// meter is "label [bar] n/limit" in exactly w cells, or "label n (no limit)".
func (m *Model) meter(label string, n, limit int64, w int, f func(int64) string) string {
	if limit <= 0 {
		return pad(m.st.dim.Render(label+" ")+f(n)+m.st.dim.Render(" (no limit)"), w)
	}
	nums := " " + f(n) + "/" + f(limit)
	barW := w - len(label) - 1 - len(nums)
	if barW < 4 {
		return pad(m.st.dim.Render(label)+nums, w)
	}
	return pad(m.st.dim.Render(label+" ")+m.bar(n, limit, barW, true)+nums, w)
}

// bar is a w-cell gauge of n out of total. A budget turns yellow near full
// and red at it; progress turns green when done.
func (m *Model) bar(n, total int64, w int, budget bool) string {
	filled := 0
	if total > 0 {
		filled = int(min(max(n, 0)*int64(w)/total, int64(w)))
	}
	style := m.st.bar
	switch {
	case !budget:
		if total > 0 && n >= total {
			style = m.st.ok
		}
	case total > 0 && n >= total:
		style = m.st.bad
	case total > 0 && n*10 >= total*9:
		style = m.st.warn
	}
	return style.Render(strings.Repeat("█", filled)) + m.st.barEmpty.Render(strings.Repeat("░", w-filled))
}

func (m *Model) planTitle() string {
	return m.st.title.Render("Plan") + m.st.dim.Render(" · fix_plan.md")
}

func (m *Model) planLines(w int) []string {
	p := m.snap.Plan
	switch {
	case !p.Known && p.Note != "":
		return []string{fit(m.st.warn.Render(p.Note), w)}
	case !p.Known:
		return []string{m.st.dim.Render("no fix_plan.md")}
	case p.Counts.Total == 0:
		return []string{m.st.dim.Render("no tasks in fix_plan.md")}
	}
	c := p.Counts
	text := fmt.Sprintf(" %d/%d done", c.Done, c.Total)
	if c.OpenOptional > 0 {
		text += fmt.Sprintf(" · %d optional open", c.OpenOptional)
	}
	barW := min(w-len(text), 40)
	if barW < 4 {
		return []string{fit(strings.TrimSpace(text), w)}
	}
	return []string{fit(m.bar(int64(c.Done), int64(c.Total), barW, false)+text, w)}
}
