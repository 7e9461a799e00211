package serve

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"ralph/internal/account"
	"ralph/internal/loop"
)

// The agents' accounts and their usage windows (docs/budgets.md, "Accounts
// and usage windows"). A limit one loop hits holds every loop on that
// account until the reset — the others adopt it instead of each finding
// out with a failed call — and loops that may use another account of the
// agent move to one with quota left. What is known of each window is kept
// in the store, so a restart does not call into a known limit. An agent
// without accounts set is one account, the daemon's own login, named by
// the agent.

// quota is the daemon's bookkeeping of the accounts, under actMu.
type quota struct {
	// windows are the known usage windows, by account.
	windows map[string]account.Window
	// last is, by session and agent, the account of the loop's last call
	// (kept in the store: the agent's session lives in that account).
	last map[string]map[string]string
	// shown is, by session, the account its loop runs under or waits for.
	shown map[string]string
}

// openQuota reads what the store knows of the windows and accounts.
func (d *Daemon) openQuota() error {
	d.quota = quota{windows: map[string]account.Window{}, last: map[string]map[string]string{}, shown: map[string]string{}}
	ws, err := d.db.Windows()
	if err != nil {
		return err
	}
	for _, w := range ws {
		d.quota.windows[w.Account] = w
	}
	last, err := d.db.SessionAccounts()
	if err != nil {
		return err
	}
	d.quota.last = last
	for _, a := range d.opts.Accounts {
		d.logf("account %s: %s", a.Name, a.Describe())
	}
	return nil
}

// lastAccount is, under actMu, the account session's last call of agent
// ran under.
func (d *Daemon) lastAccount(session, agent string) string {
	if a := d.quota.last[session][agent]; a != "" {
		return a
	}
	return account.Default(agent)
}

// shareLimits records the limits a loop holds on the account each of its
// agents last ran under, so that every loop on that account adopts them;
// a longer hold wins.
func (d *Daemon) shareLimits(session string, held map[string]loop.AgentLimit) {
	var changed []account.Window
	d.actMu.Lock()
	now := d.opts.Now()
	for agent, l := range held {
		if !l.Until.After(now) {
			continue
		}
		name := d.lastAccount(session, agent)
		msg := l.Message
		if strings.HasPrefix(msg, "waiting for quota on ") {
			continue // adopted from the fleet: known already
		}
		cur, known := d.quota.windows[name]
		w, ch := account.Merge(cur, known, account.Window{Account: name, Until: l.Until, Message: msg, Session: session, Seen: now})
		if ch {
			d.quota.windows[name] = w
			changed = append(changed, w)
		}
	}
	d.actMu.Unlock()
	for _, w := range changed {
		d.logf("[%s] %s: %s", session, account.WaitText(w, now, d.opts.Budget.Zone), w.Message)
		if err := d.db.PutWindow(w); err != nil {
			d.logf("[%s] keep the usage window of %s: %v", session, w.Account, err)
		}
	}
}

// sharedLimits is engine.Deps.SharedLimits for a loop of session on
// agents: by agent, the limit that holds it — every account it may use
// held, the one freeing first — as the loop adopts it. free are the
// agents with an account with quota left (engine.Deps.Quota). useAccounts false
// (a loop elsewhere, which runs under its worker's login) reads only the
// agents' own logins' windows.
func (d *Daemon) sharedLimits(session string, agents []string, useAccounts bool) (limits map[string]loop.AgentLimit, free map[string]bool) {
	d.actMu.Lock()
	defer d.actMu.Unlock()
	now := d.opts.Now()
	for _, agent := range agents {
		var w account.Window
		if a, ok, has := d.choose(session, agent, now, useAccounts); has {
			if ok {
				if free == nil {
					free = map[string]bool{}
				}
				free[agent] = true
				continue
			}
			w = d.quota.windows[a.Name]
		} else if w = d.quota.windows[account.Default(agent)]; !w.Held(now) {
			continue
		}
		if limits == nil {
			limits = map[string]loop.AgentLimit{}
		}
		limits[agent] = loop.AgentLimit{Until: w.Until,
			Message: fmt.Sprintf("%s (seen by session %s: %s)", account.WaitText(w, now, d.opts.Budget.Zone), w.Session, w.Message)}
		d.quota.shown[session] = w.Account
	}
	return limits, free
}

// choose is, under actMu, account.Choose for session's next call of
// agent; has is false when no account of agent serves it.
func (d *Daemon) choose(session, agent string, now time.Time, useAccounts bool) (a account.Account, free, has bool) {
	if !useAccounts {
		return account.Account{}, false, false
	}
	return account.Choose(d.opts.Accounts, agent, session, d.quota.last[session][agent], d.quota.windows, now)
}

// accountEnv is engine.Deps.AccountEnv for a loop of session: the
// account its call of agent runs under, remembered as its last.
func (d *Daemon) accountEnv(session, agent string) (env []string, switched string) {
	d.actMu.Lock()
	now := d.opts.Now()
	a, _, has := d.choose(session, agent, now, true)
	name := account.Default(agent)
	if has {
		name = a.Name
		env = a.Env(d.opts.Getenv)
	}
	prev := d.quota.last[session][agent]
	if prev != "" && prev != name {
		switched = fmt.Sprintf("%s runs under account %s now, not %s", agent, name, prev)
	}
	if d.quota.last[session] == nil {
		d.quota.last[session] = map[string]string{}
	}
	d.quota.last[session][agent] = name
	d.quota.shown[session] = name
	d.actMu.Unlock()
	if prev != name {
		if err := d.db.PutSessionAccount(session, agent, name); err != nil {
			d.logf("[%s] keep the account of %s: %v", session, agent, err)
		}
	}
	return env, switched
}

// quotaText is what a loop of session held by a usage limit until until
// shows on every surface.
func (d *Daemon) quotaText(session string, until time.Time) string {
	d.actMu.Lock()
	name := d.quota.shown[session]
	if name == "" {
		// A loop elsewhere (Temporal) runs under its worker's own login
		// of the agent.
		name = account.Default(d.activity[session].Agent)
	}
	d.actMu.Unlock()
	if name == "" {
		name = "its agent's account"
	}
	return account.WaitText(account.Window{Account: name, Until: until}, d.opts.Now(), d.opts.Budget.Zone)
}

// shownAccount is the account session's loop runs under or waits for
// ("" before its first look).
func (d *Daemon) shownAccount(session string) string {
	d.actMu.Lock()
	defer d.actMu.Unlock()
	return d.quota.shown[session]
}

// AccountFigures are one account as `ralph stats --fleet`, GET
// /api/budget and the dashboard show it: never a key, only where it is.
type AccountFigures struct {
	Name  string `json:"name"`
	Agent string `json:"agent"`
	// Login is its config directory or the variable holding its key ("":
	// the daemon's own login of the agent).
	Login string `json:"login,omitempty"`
	// Until is when its usage window resets, while it is held; Status
	// says so in words ("quota left" otherwise), Message in the agent's.
	Until   time.Time `json:"until,omitzero"`
	Status  string    `json:"status"`
	Message string    `json:"message,omitempty"`
	Session string    `json:"seen_by,omitempty"`
	// Windows are how much of each of its usage windows the agent last
	// said is used, and when each resets.
	Windows []WindowFigures `json:"windows,omitempty"`
}

// WindowFigures are one usage window of an account.
type WindowFigures struct {
	Kind string `json:"kind"` // in the agent's words: five_hour, seven_day
	// Used is the fraction used, 0–1 (absent: the agent did not say);
	// a window whose reset has passed is a new one, none of it used.
	Used     *float64  `json:"used,omitempty"`
	ResetsAt time.Time `json:"resets_at,omitzero"`
	// Seen is when the agent said it.
	Seen time.Time `json:"seen"`
	// Text is the figures in words, in the budgets' zone.
	Text string `json:"text"`
}

// windowFigures are an account's known windows as of now.
func windowFigures(ws []WindowUse, now time.Time, zone *time.Location) []WindowFigures {
	var out []WindowFigures
	for _, w := range ws {
		f := WindowFigures{Kind: w.Kind, ResetsAt: w.ResetsAt, Seen: w.Seen}
		switch {
		case !w.ResetsAt.IsZero() && !now.Before(w.ResetsAt):
			zero := 0.0
			f.Used, f.ResetsAt = &zero, time.Time{}
		case w.Used >= 0:
			used := w.Used
			f.Used = &used
		}
		f.Text = windowText(f, zone)
		out = append(out, f)
	}
	return out
}

// windowText is a window's figures in words: "five_hour 42% used,
// resets Nov 27 14:00 UTC".
func windowText(w WindowFigures, zone *time.Location) string {
	s := w.Kind
	if w.Used != nil {
		s += fmt.Sprintf(" %.0f%% used", *w.Used*100)
	}
	if !w.ResetsAt.IsZero() {
		if zone == nil {
			zone = time.Local
		}
		t := w.ResetsAt.In(zone)
		s += ", resets " + t.Format("Jan 2 15:04 MST")
	}
	return s
}

// accountFigures are the accounts set and the agents' own logins whose
// window is known, by name.
func (d *Daemon) accountFigures(now time.Time) []AccountFigures {
	used, err := d.db.WindowUsage()
	if err != nil {
		d.logf("read the accounts' usage windows: %v", err)
	}
	d.actMu.Lock()
	defer d.actMu.Unlock()
	out := []AccountFigures{}
	named := map[string]bool{}
	add := func(f AccountFigures) {
		f.Status = "quota left"
		if w, ok := d.quota.windows[f.Name]; ok && w.Held(now) {
			f.Until, f.Status, f.Message, f.Session = w.Until, account.WaitText(w, now, d.opts.Budget.Zone), w.Message, w.Session
		}
		f.Windows = windowFigures(used[f.Name], now, d.opts.Budget.Zone)
		out = append(out, f)
		named[f.Name] = true
	}
	for _, a := range d.opts.Accounts {
		login := "config " + a.ConfigDir
		if a.KeyVar != "" {
			login = "key in $" + a.KeyVar
		}
		add(AccountFigures{Name: a.Name, Agent: a.Agent, Login: login})
	}
	var own []string
	for name, w := range d.quota.windows {
		if !named[name] && w.Held(now) {
			own = append(own, name)
		}
	}
	for name := range used {
		if !named[name] && !slices.Contains(own, name) && name != "" {
			own = append(own, name)
		}
	}
	sort.Strings(own)
	for _, name := range own {
		add(AccountFigures{Name: name, Agent: name})
	}
	return out
}
