package account

import (
	"fmt"
	"time"
)

// Window is what is known of one account's usage window: that it is
// limited until Until (the reset the agent reported), in the agent's
// words, and which session's call saw it.
type Window struct {
	Account string
	Until   time.Time
	Message string
	Session string
	Seen    time.Time
}

// Held says whether w still holds at now.
func (w Window) Held(now time.Time) bool { return now.Before(w.Until) }

// Merge is what the fleet knows after next is seen: a longer hold wins,
// so that a loop reporting an older, shorter limit late does not free
// the account early. changed says whether cur was replaced.
func Merge(cur Window, known bool, next Window) (w Window, changed bool) {
	if known && !cur.Until.Before(next.Until) {
		return cur, false
	}
	return next, true
}

// Default is the name the daemon's own login of agent goes by, where no
// account of that agent is set: one agent, one account, as before there
// were accounts.
func Default(agent string) string { return agent }

// Choose picks the account a call of agent by session runs under: among
// the accounts of agent that serve session, the one it ran under last if
// free, else the first free by name. When every one is held, free is
// false and a is the one that frees first: the loop waits for it. ok is
// false when no account of agent serves session: it runs under the
// daemon's own login, Default(agent).
func Choose(as []Account, agent, session, last string, windows map[string]Window, now time.Time) (a Account, free, ok bool) {
	var first *Account
	for i := range as {
		c := &as[i]
		if c.Agent != agent || !c.Serves(session) {
			continue
		}
		w, known := windows[c.Name]
		held := known && w.Held(now)
		switch {
		case !held && c.Name == last:
			return *c, true, true
		case !held && !free:
			a, free, ok = *c, true, true
		case held && !free && (first == nil || w.Until.Before(windows[first.Name].Until)):
			first = c
		}
	}
	if free {
		return a, true, true
	}
	if first != nil {
		return *first, false, true
	}
	return Account{}, false, false
}

// WaitText is what a loop held by w shows on every surface: the hour in
// zone, with the day when the reset is not within the day.
func WaitText(w Window, now time.Time, zone *time.Location) string {
	if zone == nil {
		zone = time.Local
	}
	at := w.Until.In(zone)
	layout := "15:04 MST"
	if w.Until.Sub(now) >= 20*time.Hour {
		layout = "Mon Jan 2 15:04 MST"
	}
	return fmt.Sprintf("waiting for quota on %s until %s", w.Account, at.Format(layout))
}
