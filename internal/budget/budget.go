// Package budget decides whether the fleet may start another agent call
// under its daily budgets: cost and tokens per day, for the whole fleet
// and for each session, the day counted in one time zone. It is pure: the
// daemon hands it what was spent, what runs, and the time; it answers
// with a verdict, and never reads a clock or a store itself.
package budget

import (
	"fmt"
	"time"
)

// WarnAt is the share of a budget at which people are warned, once a day.
const WarnAt = 0.8

// Limits are the daily budgets; a zero is no budget.
type Limits struct {
	FleetCost, SessionCost     float64 // USD
	FleetTokens, SessionTokens int64   // input + output, cache reads not counted
}

// Any says whether a budget is set.
func (l Limits) Any() bool {
	return l.FleetCost > 0 || l.SessionCost > 0 || l.FleetTokens > 0 || l.SessionTokens > 0
}

// Spend is what the calls recorded in one day cost.
type Spend struct {
	CostUSD float64
	Tokens  int64
	Calls   int
	// MaxCallCost and MaxCallTokens are the dearest call's: what a call
	// still running is taken to cost.
	MaxCallCost   float64
	MaxCallTokens int64
}

// Input is what a decision looks at.
type Input struct {
	Now  time.Time
	Zone *time.Location
	// Session is the session whose loop would make the call.
	Session string
	Limits  Limits
	// Fleet and Own are today's recorded spend, of the fleet and of the
	// session.
	Fleet, Own Spend
	// Running and OwnRunning are the calls admitted and not yet recorded,
	// in the fleet and of the session (which runs one loop: 0 or 1).
	Running, OwnRunning int
}

// Verdict is a decision.
type Verdict struct {
	// Allow: the call may start.
	Allow bool
	// Until is when to ask again when not allowed: the next day's start
	// for a spent budget; zero while the budget waits for running calls to
	// be recorded (any call's end may change the answer).
	Until time.Time
	// Message says why the call waits, for every surface: "waiting for
	// budget: fleet cost 12.03/12.00 USD today, until 00:00 Europe/Berlin".
	Message string
	// MaxCostUSD is what is left of the tightest cost budget, for an agent
	// that takes a spending cap (0: no cost budget applies).
	MaxCostUSD float64
	// MaxTokens is what is left of the tightest token budget (0: none
	// applies).
	MaxTokens int64
	// Warnings are the budgets at WarnAt or over today (the caller says
	// each once a day).
	Warnings []Warning
}

// Warning is a budget at WarnAt of its limit or over.
type Warning struct {
	// Key names the budget and the day, the same all day long: "fleet
	// cost 2026-11-27", "session api tokens 2026-11-27".
	Key     string
	Message string
}

// a budget as one comparable figure.
type gauge struct {
	name        string // "fleet cost"
	limit, used float64
	running     int
	perCall     float64
	cost        bool
}

func (g gauge) set() bool   { return g.limit > 0 }
func (g gauge) spent() bool { return g.used >= g.limit }

// crowded: the calls running would, at the dearest call's price, spend
// what is left, so a new call would take the budget past its end by more
// than the calls already in flight.
func (g gauge) crowded() bool {
	return g.running > 0 && g.used+float64(g.running)*g.perCall >= g.limit
}

func (g gauge) figure() string {
	if g.cost {
		return fmt.Sprintf("%s %.2f/%.2f USD", g.name, g.used, g.limit)
	}
	return fmt.Sprintf("%s %d/%d tokens", g.name, int64(g.used), int64(g.limit))
}

func gauges(in Input) []gauge {
	own := "session " + in.Session
	return []gauge{
		{name: "fleet cost", limit: in.Limits.FleetCost, used: in.Fleet.CostUSD, running: in.Running, perCall: in.Fleet.MaxCallCost, cost: true},
		{name: "fleet tokens", limit: float64(in.Limits.FleetTokens), used: float64(in.Fleet.Tokens), running: in.Running, perCall: float64(in.Fleet.MaxCallTokens)},
		{name: own + " cost", limit: in.Limits.SessionCost, used: in.Own.CostUSD, running: in.OwnRunning, perCall: in.Own.MaxCallCost, cost: true},
		{name: own + " tokens", limit: float64(in.Limits.SessionTokens), used: float64(in.Own.Tokens), running: in.OwnRunning, perCall: float64(in.Own.MaxCallTokens)},
	}
}

// Decide says whether a new call may start now. A spent budget holds every
// call until the next day in the zone; a budget the running calls may
// spend holds new ones until those are recorded, so that the overshoot is
// at most the calls already in flight.
func Decide(in Input) Verdict {
	zone := orLocal(in.Zone)
	now := in.Now.In(zone)
	day := Day(now, zone)
	v := Verdict{Allow: true}
	for _, g := range gauges(in) {
		if !g.set() {
			continue
		}
		if g.used >= WarnAt*g.limit {
			v.Warnings = append(v.Warnings, Warning{Key: g.name + " " + day.Format(time.DateOnly),
				Message: fmt.Sprintf("budget: %s today (%.0f%%)", g.figure(), 100*g.used/g.limit)})
		}
		left := max(g.limit-g.used, 0)
		switch {
		case g.cost && (v.MaxCostUSD == 0 || left < v.MaxCostUSD):
			v.MaxCostUSD = left
		case !g.cost && (v.MaxTokens == 0 || int64(left) < v.MaxTokens):
			v.MaxTokens = int64(left)
		}
		if !v.Allow {
			continue
		}
		switch {
		case g.spent():
			next := NextDay(now, zone)
			v.Allow, v.Until = false, next
			v.Message = fmt.Sprintf("waiting for budget: %s today, until %s %s", g.figure(), next.Format("15:04"), zoneName(zone, next))
		case g.crowded():
			v.Allow = false
			v.Message = fmt.Sprintf("waiting for budget: %s today, %d call(s) running may spend the rest", g.figure(), g.running)
		}
	}
	if !v.Allow {
		v.MaxCostUSD, v.MaxTokens = 0, 0
	}
	return v
}

// Day is the start of the day in zone that t falls in.
func Day(t time.Time, zone *time.Location) time.Time {
	t = t.In(orLocal(zone))
	return startOf(t.Year(), t.Month(), t.Day(), t.Location())
}

// NextDay is the start of the day after t's, in zone: 23 or 25 hours after
// Day(t) across a change of daylight saving time, and the first instant of
// the day where its midnight does not exist.
func NextDay(t time.Time, zone *time.Location) time.Time {
	t = t.In(orLocal(zone))
	return startOf(t.Year(), t.Month(), t.Day()+1, t.Location())
}

// startOf is the first instant of a day. Where clocks jump over midnight
// (Brazil, 2018) time.Date may answer an instant of the day before; the
// day then begins where the jump lands, on a whole minute.
func startOf(y int, m time.Month, d int, loc *time.Location) time.Time {
	s := time.Date(y, m, d, 0, 0, 0, 0, loc)
	want := time.Date(y, m, d, 12, 0, 0, 0, loc) // noon always exists
	for i := 0; i < 48*60 && s.YearDay() != want.YearDay(); i++ {
		s = s.Add(time.Minute)
	}
	return s
}

func orLocal(z *time.Location) *time.Location {
	if z == nil {
		return time.Local
	}
	return z
}

// zoneName names the zone as people set it (Europe/Berlin); the machine's
// own zone, which has no such name in Go, by its abbreviation at t.
func zoneName(z *time.Location, t time.Time) string {
	if n := z.String(); n != "Local" && n != "" {
		return n
	}
	abbr, _ := t.Zone()
	return abbr
}
