package budget

import (
	"strings"
	"testing"
	"time"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no zone data for %s: %v", name, err)
	}
	return z
}

func TestDayArithmetic(t *testing.T) {
	berlin, saoPaulo := zone(t, "Europe/Berlin"), zone(t, "America/Sao_Paulo")
	cases := []struct {
		name      string
		now       time.Time
		zone      *time.Location
		day, next string // RFC3339
		hours     float64
	}{
		{"an ordinary day", time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC), berlin, "2026-11-27T00:00:00+01:00", "2026-11-28T00:00:00+01:00", 24},
		{"just before midnight there, the UTC day still earlier", time.Date(2026, 11, 27, 22, 59, 59, 0, time.UTC), berlin, "2026-11-27T00:00:00+01:00", "2026-11-28T00:00:00+01:00", 24},
		{"midnight there is the next day already", time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC), berlin, "2026-11-28T00:00:00+01:00", "2026-11-29T00:00:00+01:00", 24},
		{"spring forward: a day of 23 hours", time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC), berlin, "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00", 23},
		{"fall back: a day of 25 hours", time.Date(2026, 10, 25, 12, 0, 0, 0, time.UTC), berlin, "2026-10-25T00:00:00+02:00", "2026-10-26T00:00:00+01:00", 25},
		{"UTC", time.Date(2026, 11, 27, 23, 30, 0, 0, time.UTC), time.UTC, "2026-11-27T00:00:00Z", "2026-11-28T00:00:00Z", 24},
		// Brazil moved its clocks at midnight (2018-11-04 00:00 → 01:00):
		// that day began at 01:00 and had 23 hours.
		{"a day whose midnight does not exist", time.Date(2018, 11, 3, 15, 0, 0, 0, time.UTC), saoPaulo, "2018-11-03T00:00:00-03:00", "2018-11-04T01:00:00-02:00", 23},
		{"the day that began at one", time.Date(2018, 11, 4, 15, 0, 0, 0, time.UTC), saoPaulo, "2018-11-04T01:00:00-02:00", "2018-11-05T00:00:00-02:00", 23},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			day, next := Day(c.now, c.zone), NextDay(c.now, c.zone)
			if got := day.Format(time.RFC3339); got != c.day {
				t.Errorf("Day = %s, want %s", got, c.day)
			}
			if got := next.Format(time.RFC3339); got != c.next {
				t.Errorf("NextDay = %s, want %s", got, c.next)
			}
			if h := next.Sub(day).Hours(); c.name != "a day whose midnight does not exist" && h != c.hours {
				t.Errorf("the day has %v hours, want %v", h, c.hours)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	now := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC) // 19:00 in Berlin
	midnight := time.Date(2026, 11, 28, 0, 0, 0, 0, berlin)
	cases := []struct {
		name       string
		in         Input
		allow      bool
		until      time.Time
		message    string // a part of it
		maxCost    float64
		maxTokens  int64
		warnings   []string // keys
		noWarnings bool
	}{
		{name: "no budgets: every call starts", in: Input{Fleet: Spend{CostUSD: 1000}}, allow: true, noWarnings: true},
		{name: "under the fleet's cost budget", in: Input{Limits: Limits{FleetCost: 12}, Fleet: Spend{CostUSD: 5, Calls: 5, MaxCallCost: 1}},
			allow: true, maxCost: 7, noWarnings: true},
		{name: "the fleet's cost budget spent", in: Input{Limits: Limits{FleetCost: 12}, Fleet: Spend{CostUSD: 12.03, Calls: 12, MaxCallCost: 1.2}},
			until: midnight, message: "waiting for budget: fleet cost 12.03/12.00 USD today, until 00:00 Europe/Berlin", warnings: []string{"fleet cost 2026-11-27"}},
		{name: "exactly spent is spent", in: Input{Limits: Limits{FleetCost: 12}, Fleet: Spend{CostUSD: 12}}, until: midnight, message: "fleet cost 12.00/12.00 USD", warnings: []string{"fleet cost 2026-11-27"}},
		{name: "80% warns and still calls", in: Input{Limits: Limits{FleetCost: 10}, Fleet: Spend{CostUSD: 8, Calls: 8, MaxCallCost: 1}},
			allow: true, maxCost: 2, warnings: []string{"fleet cost 2026-11-27"}},
		{name: "79% does not warn", in: Input{Limits: Limits{FleetCost: 10}, Fleet: Spend{CostUSD: 7.9}}, allow: true, maxCost: 2.1, noWarnings: true},
		{name: "a running call may spend the rest: wait for it, not for tomorrow",
			in:    Input{Limits: Limits{FleetCost: 12}, Fleet: Spend{CostUSD: 11.2, Calls: 11, MaxCallCost: 1.1}, Running: 1},
			until: time.Time{}, message: "1 call(s) running may spend the rest", warnings: []string{"fleet cost 2026-11-27"}},
		{name: "a running call leaves room for another", in: Input{Limits: Limits{FleetCost: 12}, Fleet: Spend{CostUSD: 5, Calls: 5, MaxCallCost: 1}, Running: 1},
			allow: true, maxCost: 7, noWarnings: true},
		{name: "nothing recorded yet today: no price to guess from", in: Input{Limits: Limits{FleetCost: 12}, Running: 3}, allow: true, maxCost: 12, noWarnings: true},
		{name: "the session's cost budget holds its own calls", in: Input{Session: "api", Limits: Limits{FleetCost: 100, SessionCost: 3},
			Fleet: Spend{CostUSD: 10}, Own: Spend{CostUSD: 3.5}}, until: midnight, message: "waiting for budget: session api cost 3.50/3.00 USD today", warnings: []string{"session api cost 2026-11-27"}},
		{name: "another session's spend is not this one's", in: Input{Session: "web", Limits: Limits{SessionCost: 3}, Fleet: Spend{CostUSD: 10}, Own: Spend{CostUSD: 1}},
			allow: true, maxCost: 2, noWarnings: true},
		{name: "the tightest cost budget is passed down", in: Input{Session: "api", Limits: Limits{FleetCost: 12, SessionCost: 3}, Fleet: Spend{CostUSD: 11}, Own: Spend{CostUSD: 0.5}},
			allow: true, maxCost: 1, warnings: []string{"fleet cost 2026-11-27"}},
		{name: "the fleet's token budget", in: Input{Limits: Limits{FleetTokens: 1000000}, Fleet: Spend{Tokens: 1000001}},
			until: midnight, message: "waiting for budget: fleet tokens 1000001/1000000 tokens today, until 00:00 Europe/Berlin", warnings: []string{"fleet tokens 2026-11-27"}},
		{name: "the session's token budget", in: Input{Session: "api", Limits: Limits{SessionTokens: 500}, Own: Spend{Tokens: 450, Calls: 3, MaxCallTokens: 100}, OwnRunning: 1},
			message: "session api tokens 450/500 tokens today, 1 call(s) running", warnings: []string{"session api tokens 2026-11-27"}},
		{name: "the tightest token budget is told too", in: Input{Session: "api", Limits: Limits{FleetTokens: 1000, SessionTokens: 300}, Fleet: Spend{Tokens: 500}, Own: Spend{Tokens: 100}},
			allow: true, maxTokens: 200, noWarnings: true},
		{name: "two budgets at 80%: two warnings", in: Input{Session: "api", Limits: Limits{FleetCost: 10, SessionTokens: 100}, Fleet: Spend{CostUSD: 9}, Own: Spend{Tokens: 85}},
			allow: true, maxCost: 1, maxTokens: 15, warnings: []string{"fleet cost 2026-11-27", "session api tokens 2026-11-27"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Now, c.in.Zone = now, berlin
			v := Decide(c.in)
			if v.Allow != c.allow {
				t.Fatalf("Allow = %v, want %v (%s)", v.Allow, c.allow, v.Message)
			}
			if !v.Until.Equal(c.until) {
				t.Errorf("Until = %v, want %v", v.Until, c.until)
			}
			if !strings.Contains(v.Message, c.message) || (c.allow && v.Message != "") {
				t.Errorf("Message = %q, want %q in it", v.Message, c.message)
			}
			if d := v.MaxCostUSD - c.maxCost; d > 1e-9 || d < -1e-9 {
				t.Errorf("MaxCostUSD = %v, want %v", v.MaxCostUSD, c.maxCost)
			}
			if v.MaxTokens != c.maxTokens {
				t.Errorf("MaxTokens = %d, want %d", v.MaxTokens, c.maxTokens)
			}
			var keys []string
			for _, w := range v.Warnings {
				keys = append(keys, w.Key)
			}
			if strings.Join(keys, ",") != strings.Join(c.warnings, ",") {
				t.Errorf("warnings %q, want %q", keys, c.warnings)
			}
		})
	}
}

// The day turns: the same spend that held calls yesterday holds none the
// next day, because the caller counts only the new day's records.
func TestDecideNextDayResumes(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	in := Input{Zone: berlin, Limits: Limits{FleetCost: 12}, Fleet: Spend{CostUSD: 12.5}, Now: time.Date(2026, 11, 27, 22, 59, 0, 0, time.UTC)}
	v := Decide(in)
	if v.Allow {
		t.Fatal("a spent budget let a call start")
	}
	in.Now, in.Fleet = v.Until, Spend{}
	if Day(in.Now, berlin) != v.Until {
		t.Fatalf("the wait ends at %v, not at the next day's start", v.Until)
	}
	if v := Decide(in); !v.Allow {
		t.Fatalf("the next day still waits: %s", v.Message)
	}
}

func TestSettings(t *testing.T) {
	env := map[string]string{EnvFleetCost: "12.00", EnvSessionCost: "3", EnvFleetTokens: "2_000_000", EnvSessionTokens: "500000", EnvZone: "Europe/Berlin"}
	c, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits != (Limits{FleetCost: 12, SessionCost: 3, FleetTokens: 2000000, SessionTokens: 500000}) || c.Zone.String() != "Europe/Berlin" {
		t.Fatalf("%+v %v", c.Limits, c.Zone)
	}
	if c, _ := FromEnv(func(string) string { return "" }); c.Limits.Any() || c.Zone != time.Local {
		t.Fatalf("nothing set: %+v %v", c.Limits, c.Zone)
	}
	for _, bad := range []struct{ key, value, want string }{
		{EnvFleetCost, "twelve", "RALPH_FLEET_MAX_COST_PER_DAY=\"twelve\": want US dollars"},
		{EnvSessionCost, "-1", "RALPH_SESSION_MAX_COST_PER_DAY=\"-1\""},
		{EnvFleetTokens, "1.5", "RALPH_FLEET_MAX_TOKENS_PER_DAY=\"1.5\": want a whole number"},
		{EnvZone, "Mars/Olympus", "BUDGET_TIMEZONE=\"Mars/Olympus\": want an IANA time zone"},
	} {
		_, err := FromEnv(func(k string) string {
			if k == bad.key {
				return bad.value
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s=%s: %v, want %q", bad.key, bad.value, err, bad.want)
		}
		if Check(bad.key, bad.value) == nil {
			t.Errorf("Check(%s, %s) passed", bad.key, bad.value)
		}
	}
	if Check("LISTEN", "nonsense") != nil {
		t.Error("Check judged a setting that is not a budget's")
	}
}
