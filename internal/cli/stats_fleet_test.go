package cli

import (
	"bytes"
	"strings"
	"testing"

	"ralph/internal/serve"
)

func TestPrintFleetSpend(t *testing.T) {
	var b bytes.Buffer
	printFleetSpend(&b, serve.BudgetReport{Day: "2026-11-27", Zone: "Europe/Berlin",
		Limits: serve.BudgetLimits{FleetCostUSD: 12, SessionCostUSD: 5},
		Fleet:  serve.SpendFigures{Calls: 12, Running: 1, CostUSD: 9.6, Tokens: 98400},
		Sessions: []serve.SpendFigures{{Session: "api", Calls: 7, Running: 1, CostUSD: 5, Tokens: 61200},
			{Session: "web", Calls: 5, CostUSD: 4.6, Tokens: 37200}},
		Accounts: []serve.AccountFigures{{Name: "work", Agent: "claude", Login: "config /c/work", Status: "quota left",
			Windows: []serve.WindowFigures{{Kind: "five_hour", Text: "five_hour 42% used, resets Nov 27 15:00 CET"}, {Kind: "seven_day", Text: "seven_day"}}}},
		PerAccount: []serve.SpendFigures{{Account: "work", Calls: 9, CostUSD: 7, Tokens: 80000}, {Account: "claude", Calls: 3, CostUSD: 2.6, Tokens: 18400}}})
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{"spend today (2026-11-27, Europe/Berlin):", "fleet     12        1  $9.60  $12.00  98,400       -", "session api      7        1  $5.00   $5.00  61,200       -",
		"account work      9        0  $7.00       -  80,000       -", "account claude      3        0  $2.60       -  18,400       -",
		"  work  claude  config /c/work  quota left; five_hour 42% used, resets Nov 27 15:00 CET; seven_day\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
