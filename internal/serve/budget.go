package serve

import (
	"fmt"
	"sort"
	"time"

	"ralph/internal/budget"
	"ralph/internal/engine"
	"ralph/internal/loop"
)

// The fleet's daily budgets (docs/budgets.md). Every agent call a loop of
// this daemon makes is admitted here first, right before it starts
// (engine.Deps.Admit): the one place a call is let through, so that no
// call starts once a budget is spent, and the calls admitted but not yet
// recorded are known — the overshoot is at most those. What was spent
// comes from the spend ledger (db_spend.go), which outlives a restart.

// budgets is the admission's bookkeeping, in memory only.
type budgets struct {
	// running counts, by session, the calls admitted and not yet
	// recorded. budMu also makes each admission's read of the ledger and
	// its count one step, so two loops never both take the last room.
	running map[string]int
	// warned are the warnings given, so that an admission past 80% writes
	// nothing; the store remembers them across restarts.
	warned map[string]bool
	// snap is the day's spend as last read for a loop elsewhere's hold,
	// read again after holdFresh: each running workflow's hold is looked
	// at every half second, which should not be a query each.
	snap     Spend
	snapDay  time.Time
	snapRead time.Time
	// snapCost is each session's cost total when snap was read: a session
	// whose total moved since reads the spend again, for its base and its
	// spend to agree.
	snapCost map[string]float64
}

// holdFresh is how long budgetHold reuses a reading of the day's spend.
const holdFresh = time.Second

// admit is engine.Deps.Admit for a loop of session: whether its next call
// may start under the daily budgets.
func (d *Daemon) admit(session string) engine.Admission {
	cfg := d.opts.Budget
	if !cfg.Limits.Any() {
		return engine.Admission{Allow: true}
	}
	d.budMu.Lock()
	defer d.budMu.Unlock()
	now := d.opts.Now()
	spent, err := d.db.Spent(budget.Day(now, cfg.Zone))
	if err != nil {
		// Not knowing the spend is no licence to spend: ask again soon.
		return engine.Admission{Until: now.Add(30 * time.Second), Message: "waiting for budget: today's spend could not be read: " + err.Error()}
	}
	total := 0
	for _, n := range d.bud.running {
		total += n
	}
	v := budget.Decide(budget.Input{Now: now, Zone: cfg.Zone, Session: session, Limits: cfg.Limits,
		Fleet: spent.Fleet, Own: spent.Sessions[session], Running: total, OwnRunning: d.bud.running[session]})
	d.warnBudgets(v.Warnings, now)
	if !v.Allow {
		return engine.Admission{Until: v.Until, Message: v.Message}
	}
	d.bud.running[session]++
	done := false
	return engine.Admission{Allow: true, MaxCostUSD: v.MaxCostUSD, Done: func() {
		d.budMu.Lock()
		defer d.budMu.Unlock()
		if !done {
			done = true
			if d.bud.running[session]--; d.bud.running[session] <= 0 {
				delete(d.bud.running, session)
			}
		}
	}}
}

// budgetHold is the hold on the calls of a loop running elsewhere (a
// Temporal workflow), which decides its calls itself: none is admitted
// here. While the budgets have room it is an allowance — what is left of
// them, counted from the session's totals as the daemon knows them — so
// that the loop stops by itself once its own calls, which it knows before
// the daemon does, have spent it; a spent budget (or one the other loops'
// running calls may spend) holds it outright. So the overshoot is at most
// one call per loop, the one running when the others spent the rest.
func (d *Daemon) budgetHold(session string) *loop.Hold {
	cfg := d.opts.Budget
	if !cfg.Limits.Any() {
		return nil
	}
	others := 0
	d.actMu.Lock()
	for s, a := range d.activity {
		if a.LastAction == "executing" && s != session {
			others++
		}
	}
	d.actMu.Unlock()
	// The totals first: a call saved between the two reads is then in the
	// spend but not in the base, and counts twice — early, never late.
	p, err := d.db.progress(session)
	d.budMu.Lock()
	defer d.budMu.Unlock()
	now := d.opts.Now()
	day := budget.Day(now, cfg.Zone)
	spent := d.bud.snap
	if err == nil && (!day.Equal(d.bud.snapDay) || now.Sub(d.bud.snapRead) >= holdFresh || now.Before(d.bud.snapRead) || p.cost != d.bud.snapCost[session]) {
		if spent, err = d.db.Spent(day); err == nil {
			d.bud.snap, d.bud.snapDay, d.bud.snapRead = spent, day, now
			d.bud.snapCost[session] = p.cost
		}
	}
	if err != nil {
		return &loop.Hold{Kind: loop.WaitBudget, Until: now.Add(30 * time.Second), Message: "waiting for budget: today's spend could not be read: " + err.Error()}
	}
	v := budget.Decide(budget.Input{Now: now, Zone: cfg.Zone, Session: session, Limits: cfg.Limits,
		Fleet: spent.Fleet, Own: spent.Sessions[session], Running: others})
	d.warnBudgets(v.Warnings, now)
	if !v.Allow {
		return &loop.Hold{Kind: loop.WaitBudget, Until: v.Until, Message: v.Message}
	}
	return &loop.Hold{Kind: loop.WaitBudget, Message: "waiting for budget: this task's last calls spent what was left of it, until they are counted",
		Allowance: &loop.Allowance{CostUSD: v.MaxCostUSD, Tokens: v.MaxTokens, FromCostUSD: p.cost, FromTokens: p.tokens}}
}

// warnBudgets (under budMu) gives each warning once a day: to every chat
// (the outbox) and on the event stream, which the dashboard shows.
func (d *Daemon) warnBudgets(ws []budget.Warning, now time.Time) {
	for _, w := range ws {
		if d.bud.warned[w.Key] {
			continue
		}
		n := &Notice{Kind: NoticeBudget, Message: w.Message}
		sent, err := d.db.warnOnce(w.Key, n, d.outbox.names, now)
		if err != nil {
			d.logf("budget warning %q: %v", w.Key, err)
			continue
		}
		if len(d.bud.warned) > 1000 {
			clear(d.bud.warned) // yesterday's keys; the store still knows them
		}
		d.bud.warned[w.Key] = true
		if sent {
			d.outbox.wakeAll()
			d.bus.Publish(Event{Type: EventBudgetWarning, At: now, Message: w.Message})
		}
	}
}

// EventBudgetWarning is the event stream's warning of a budget at 80%.
const EventBudgetWarning = "budget_warning"

// noticeWait tells the task's chat once, through the outbox, that it
// waits for a spent budget or an account's quota until until: a restart
// that finds it still waiting says nothing new.
func (d *Daemon) noticeWait(t Task, kind, msg string, until time.Time) {
	n := d.notice(t)
	n.Kind, n.Message, n.Until = kind, msg, until
	key := fmt.Sprintf("wait %s %s", t.ID, until.UTC().Format(time.RFC3339))
	if kind != NoticeBudgetWait {
		key = kind + " " + key
	}
	if sent, err := d.db.warnOnce(key, &n, d.outbox.names, d.opts.Now()); err != nil {
		d.logf("[%s] %s notice: %v", t.Session, kind, err)
	} else if sent {
		d.outbox.wakeAll()
	}
}

// BudgetReport is what the daily budgets stand at: `ralph stats --fleet`,
// GET /api/budget and the dashboard's overview.
type BudgetReport struct {
	Day      string         `json:"day"`  // YYYY-MM-DD in Zone
	Zone     string         `json:"zone"` // the zone's name
	Limits   BudgetLimits   `json:"limits"`
	Fleet    SpendFigures   `json:"fleet"`
	Sessions []SpendFigures `json:"sessions"`
	// Accounts are the agents' accounts and what is known of their usage
	// windows (accounts.go).
	Accounts []AccountFigures `json:"accounts"`
	// PerAccount is the day's spend by the account the calls ran under
	// (an agent's name: its own login; "": calls recorded before the
	// ledger kept accounts).
	PerAccount []SpendFigures `json:"per_account"`
}

// BudgetLimits are the budgets set (0: none).
type BudgetLimits struct {
	FleetCostUSD   float64 `json:"fleet_cost_usd"`
	SessionCostUSD float64 `json:"session_cost_usd"`
	FleetTokens    int64   `json:"fleet_tokens"`
	SessionTokens  int64   `json:"session_tokens"`
}

// SpendFigures are one day's spend of the fleet or a session.
type SpendFigures struct {
	Session string  `json:"session,omitempty"`
	Account string  `json:"account,omitempty"`
	Calls   int     `json:"calls"`
	CostUSD float64 `json:"cost_usd"`
	Tokens  int64   `json:"tokens"`
	// Running are its calls admitted and not yet recorded.
	Running int `json:"running"`
}

// Budget reports today's spend against the budgets.
func (d *Daemon) Budget() (BudgetReport, error) {
	cfg := d.opts.Budget
	now := d.opts.Now()
	day := budget.Day(now, cfg.Zone)
	spent, err := d.db.Spent(day)
	if err != nil {
		return BudgetReport{}, err
	}
	l := cfg.Limits
	r := BudgetReport{Day: day.Format(time.DateOnly), Zone: day.Location().String(),
		Limits: BudgetLimits{FleetCostUSD: l.FleetCost, SessionCostUSD: l.SessionCost, FleetTokens: l.FleetTokens, SessionTokens: l.SessionTokens},
		Fleet:  SpendFigures{Calls: spent.Fleet.Calls, CostUSD: spent.Fleet.CostUSD, Tokens: spent.Fleet.Tokens}, Sessions: []SpendFigures{}}
	d.budMu.Lock()
	running := map[string]int{}
	for s, n := range d.bud.running {
		running[s] = n
		r.Fleet.Running += n
	}
	d.budMu.Unlock()
	names := map[string]bool{}
	for s := range spent.Sessions {
		names[s] = true
	}
	for s := range running {
		names[s] = true
	}
	for s := range names {
		x := spent.Sessions[s]
		r.Sessions = append(r.Sessions, SpendFigures{Session: s, Calls: x.Calls, CostUSD: x.CostUSD, Tokens: x.Tokens, Running: running[s]})
	}
	sort.Slice(r.Sessions, func(i, j int) bool { return r.Sessions[i].Session < r.Sessions[j].Session })
	r.Accounts = d.accountFigures(now)
	r.PerAccount = []SpendFigures{}
	for a, x := range spent.Accounts {
		r.PerAccount = append(r.PerAccount, SpendFigures{Account: a, Calls: x.Calls, CostUSD: x.CostUSD, Tokens: x.Tokens})
	}
	sort.Slice(r.PerAccount, func(i, j int) bool { return r.PerAccount[i].Account < r.PerAccount[j].Account })
	return r, nil
}
