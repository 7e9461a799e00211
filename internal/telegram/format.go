package telegram

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// Replies are plain text (no parse mode: nothing in a title, a summary or
// a question can turn into markup), a few short lines a phone shows
// whole: the state first, then the loop count, the breaker, the agent's
// last word, the cost, and what to do next.

// Bounds of what one reply shows of texts that come from people or the
// agent.
const (
	titleShown    = 200
	summaryShown  = 400
	questionShown = 1000
	listTitle     = 60
)

var stateIcons = map[fleet.State]string{
	fleet.Queued: "🕓", fleet.Running: "▶️", fleet.Waiting: "⏸", fleet.Done: "✅", fleet.Halted: "⛔", fleet.Cancelled: "✖️",
}

func icon(s fleet.State) string {
	if i, ok := stateIcons[s]; ok {
		return i
	}
	return "•"
}

// helpText is the help, or the one line of it a malformed command needs.
func helpText(problem, usageLine string) string {
	var b strings.Builder
	if problem != "" {
		fmt.Fprintf(&b, "🤔 %s\n", problem)
	}
	if usageLine != "" {
		fmt.Fprintf(&b, "usage: %s", usageLine)
		return b.String()
	}
	b.WriteString("ralph drives the fleet:\n")
	for _, u := range usage {
		b.WriteString(u.line + "\n")
	}
	b.WriteString("A question from a task is answered by replying to it.")
	return b.String()
}

func loops(v serve.TaskView) string {
	if v.MaxLoops == 0 {
		return fmt.Sprintf("loop %d", v.LoopCount)
	}
	return fmt.Sprintf("loop %d/%d", v.LoopCount, v.MaxLoops)
}

func cost(usd float64) string {
	if usd <= 0 {
		return ""
	}
	return fmt.Sprintf("$%.2f", usd)
}

// taskText is one task, as a status reply.
func taskText(v serve.TaskView, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s · %s %s · %s\n", icon(v.State), v.Session, v.ID, v.State, loops(v))
	b.WriteString(clip(v.Title, titleShown) + "\n")
	cb := v.CircuitBreaker
	line := "breaker " + cb.State
	if cb.State != "" && cb.State != "CLOSED" {
		line += fmt.Sprintf(" (opened %d×)", cb.TotalOpens)
		if cb.Reason != "" {
			line += ": " + clip(cb.Reason, summaryShown)
		}
	}
	if c := cost(v.CostUSD); c != "" {
		line += " · " + c
	}
	b.WriteString(line + "\n")
	if v.Activity != "" {
		b.WriteString("now: " + v.Activity)
		if !v.WaitUntil.IsZero() {
			b.WriteString(" " + until(v.WaitUntil, now))
		}
		b.WriteString("\n")
	}
	if v.Summary != "" {
		b.WriteString("last: " + clip(v.Summary, summaryShown) + "\n")
	}
	for _, q := range v.Questions {
		b.WriteString("❓ " + clip(q, questionShown) + "\n")
	}
	if len(v.Questions) > 0 {
		fmt.Fprintf(&b, "↳ reply to the question, or /ralph answer %s text…\n", v.Session)
	}
	if v.Message != "" && v.State != fleet.Running && v.State != fleet.Queued {
		why := v.Message
		if v.ExitReason != "" && !strings.HasPrefix(why, v.ExitReason) {
			why = v.ExitReason + ": " + why
		}
		b.WriteString("why: " + clip(why, summaryShown) + "\n")
	}
	switch {
	case v.State == fleet.Halted:
		fmt.Fprintf(&b, "next: /ralph reset %s, then /ralph loop %s\n", v.Session, v.Session)
	case v.State == fleet.Waiting && len(v.Questions) == 0:
		fmt.Fprintf(&b, "next: /ralph loop %s [max]\n", v.Session)
	}
	return strings.TrimRight(b.String(), "\n")
}

// listText is each session's task, a line each, and the idle sessions.
func listText(views []serve.TaskView, sessions []serve.Session) string {
	if len(sessions) == 0 && len(views) == 0 {
		return "No sessions are registered (ralph serve --session NAME=DIR)."
	}
	var b strings.Builder
	busy := map[string]bool{}
	for _, v := range views {
		busy[v.Session] = true
		fmt.Fprintf(&b, "%s %s · %s %s · %s — %s\n", icon(v.State), v.Session, v.ID, v.State, loops(v), clip(v.Title, listTitle))
	}
	var idle []string
	for _, s := range sessions {
		if !busy[s.Name] {
			idle = append(idle, s.Name)
		}
	}
	if len(views) == 0 {
		fmt.Fprintf(&b, "No tasks yet. Start one: /ralph start %s task…\n", sessions[0].Name)
	}
	if len(idle) > 0 {
		fmt.Fprintf(&b, "no task yet: %s\n", strings.Join(idle, ", "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// circuitText is a session's breaker and its task's last iterations.
func circuitText(v serve.TaskView) string {
	cb := v.CircuitBreaker
	var b strings.Builder
	fmt.Fprintf(&b, "⚡ %s · breaker %s (opened %d×)\n", v.Session, cb.State, cb.TotalOpens)
	if cb.Reason != "" {
		b.WriteString("why: " + clip(cb.Reason, summaryShown) + "\n")
	}
	fmt.Fprintf(&b, "no progress %d · same error %d · last progress at loop %d · now loop %d\n",
		cb.ConsecutiveNoProgress, cb.ConsecutiveSameError, cb.LastProgressLoop, cb.CurrentLoop)
	if len(v.History) > 0 {
		fmt.Fprintf(&b, "task %s, last iterations:\n", v.ID)
	}
	for _, h := range v.History {
		st := h.StatusBlock["STATUS"]
		if st == "" {
			st = "no status"
		}
		fmt.Fprintf(&b, "  loop %d: %d files, %d errors, %s\n", h.Loop, h.FilesModified, h.ErrorsDetected, st)
	}
	if cb.State != "" && cb.State != "CLOSED" {
		fmt.Fprintf(&b, "reset: /ralph reset %s\n", v.Session)
	}
	return strings.TrimRight(b.String(), "\n")
}

// watchdogText is what the watchdog watches, one line a session.
func watchdogText(ws []serve.WatchStatus, now time.Time) string {
	if len(ws) == 0 {
		return "👁 The watchdog watches nothing (no session has a tmux target to read)."
	}
	var b strings.Builder
	b.WriteString("👁 The watchdog watches:\n")
	for _, w := range ws {
		fmt.Fprintf(&b, "• %s → %s: ", w.Session, orDash(w.Target))
		if !w.Active {
			b.WriteString("not watching")
			if w.Message != "" {
				b.WriteString(" (" + clip(w.Message, summaryShown) + ")")
			}
			b.WriteString("\n")
			continue
		}
		parts := []string{"watching"}
		if w.TaskID != "" {
			parts = append(parts, "task "+w.TaskID)
		}
		if w.Status != "" {
			parts = append(parts, "STATUS "+w.Status)
		}
		if !w.Seen.IsZero() {
			parts = append(parts, "changed "+ago(now.Sub(w.Seen)))
		}
		b.WriteString(strings.Join(parts, ", ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// noticeText is a notice as the chat reads it.
func noticeText(n serve.Notice, now time.Time) string {
	if n.Kind == serve.NoticeBudget {
		return "💰 " + n.Message
	}
	var b strings.Builder
	head := fmt.Sprintf("%s · %s", n.Session, n.TaskID)
	stats := fmt.Sprintf("%d loops", n.Loops)
	if n.MaxLoops > 0 {
		stats = fmt.Sprintf("%d/%d loops", n.Loops, n.MaxLoops)
	}
	if c := cost(n.CostUSD); c != "" {
		stats += ", " + c
	}
	switch n.Kind {
	case serve.NoticeDone:
		reason := ""
		if n.Reason != "" {
			reason = " (" + n.Reason + ")"
		}
		fmt.Fprintf(&b, "✅ %s done%s — %s\n", head, reason, stats)
	case serve.NoticeHalted:
		fmt.Fprintf(&b, "⛔ %s halted — %s\n", head, clip(n.Message, summaryShown))
	case serve.NoticeQuestion:
		fmt.Fprintf(&b, "❓ %s asks:\n", head)
	case serve.NoticeUsageLimit:
		fmt.Fprintf(&b, "⏳ %s waits for a usage limit %s\n", head, until(n.Until, now))
	case serve.NoticeStopped:
		fmt.Fprintf(&b, "⏸ %s stopped — %s (%s)\n", head, clip(n.Message, summaryShown), stats)
	case serve.NoticeBudgetWait:
		fmt.Fprintf(&b, "⏳ %s %s\n", head, clip(n.Message, summaryShown))
	case serve.NoticeApproval:
		_, what, _ := strings.Cut(n.Message, " ")
		fmt.Fprintf(&b, "🔐 %s asks to run %s (%s)\n", head, clip(what, summaryShown), n.Item)
	default:
		fmt.Fprintf(&b, "%s: %s\n", head, clip(n.Message, summaryShown))
	}
	b.WriteString(clip(n.Title, titleShown) + "\n")
	switch n.Kind {
	case serve.NoticeQuestion:
		for _, q := range n.Questions {
			b.WriteString("• " + clip(q, questionShown) + "\n")
		}
		b.WriteString("↳ Reply to this message with your answer; the loop resumes.")
	case serve.NoticeUsageLimit:
		if n.Message != "" {
			b.WriteString(clip(n.Message, summaryShown) + "\n")
		}
	default:
		if n.Summary != "" {
			b.WriteString("last: " + clip(n.Summary, summaryShown) + "\n")
		}
	}
	switch n.Kind {
	case serve.NoticeHalted:
		b.WriteString("what to do: " + haltAdvice(n.Reason, n.Session))
	case serve.NoticeStopped:
		fmt.Fprintf(&b, "next: /ralph loop %s [max]", n.Session)
	}
	return strings.TrimRight(b.String(), "\n")
}

// haltAdvice is what a person does about a halted task.
func haltAdvice(reason, session string) string {
	switch reason {
	case "circuit_breaker_open":
		return fmt.Sprintf("see /circuit %s; once the cause is fixed, /ralph reset %s, then /ralph loop %s", session, session, session)
	case "permission_denied":
		return fmt.Sprintf("the agent was refused tools it needs: allow them in the session's .ralphrc (ALLOWED_TOOLS) and run `ralph trust` there, then /ralph reset %s and /ralph loop %s", session, session)
	}
	return fmt.Sprintf("fix the cause on the machine (the daemon's log says more), then /ralph loop %s", session)
}

var answerHint = regexp.MustCompile(`ralph task answer (\S+) TEXT…`)

// errorText is a refusal as a reply: the daemon's words, with the chat's
// commands for the client's.
func errorText(err error) string {
	msg := err.Error()
	var fe *fleet.Error
	if errors.As(err, &fe) {
		msg = fe.Msg
	}
	msg = answerHint.ReplaceAllString(msg, "reply to the question, or /ralph answer $1 text…")
	msg = strings.ReplaceAll(msg, "ralph task start", "/ralph start")
	msg = strings.ReplaceAll(msg, "ralph task ", "/ralph ")
	msg = strings.ReplaceAll(msg, "TITLE…", "task…")
	return "⚠️ " + msg
}

func until(t, now time.Time) string {
	if t.IsZero() {
		return "until it resets"
	}
	s := "until " + t.UTC().Format("2006-01-02 15:04 UTC")
	if d := t.Sub(now); d > 0 {
		s += " (in " + span(d) + ")"
	}
	return s
}

func ago(d time.Duration) string {
	if d < time.Minute {
		return "just now"
	}
	return span(d) + " ago"
}

// span is a duration to the minute: "2h 10m", "3d 4h".
func span(d time.Duration) string {
	m := int(d.Round(time.Minute) / time.Minute)
	switch {
	case m < 1:
		return "<1m"
	case m < 60:
		return fmt.Sprintf("%dm", m)
	case m < 48*60:
		return fmt.Sprintf("%dh %dm", m/60, m%60)
	}
	return fmt.Sprintf("%dd %dh", m/(24*60), m/60%24)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// clip shortens s to max runes, on one line.
func clip(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
