package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"ralph/internal/serve"
)

// fleetStats is `ralph stats --fleet`: what the daemon's fleet spent today,
// in total and by session, against its daily budgets.
func fleetStats(ctx context.Context, opts *statsOptions) error {
	c, err := (&taskOptions{Server: opts.Server, Home: opts.Home}).client()
	if err != nil {
		return err
	}
	r, err := c.Budget(ctx)
	if err != nil {
		return err
	}
	if opts.Project.json {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printFleetSpend(opts.IO.Out, r)
	return nil
}

func printFleetSpend(w io.Writer, r serve.BudgetReport) {
	fmt.Fprintf(w, "spend today (%s, %s):\n", r.Day, r.Zone)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tcalls\trunning\tcost\tbudget\ttokens\tbudget\t")
	row := func(label string, f serve.SpendFigures, cost float64, tokens int64) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t$%.2f\t%s\t%s\t%s\t\n", label, f.Calls, f.Running, f.CostUSD, dollars(cost), thousands(f.Tokens), tokenLimit(tokens))
	}
	row("fleet", r.Fleet, r.Limits.FleetCostUSD, r.Limits.FleetTokens)
	for _, s := range r.Sessions {
		row("session "+s.Session, s, r.Limits.SessionCostUSD, r.Limits.SessionTokens)
	}
	for _, a := range r.PerAccount {
		name := a.Account
		if name == "" {
			name = "(before accounts)"
		}
		row("account "+name, a, 0, 0)
	}
	_ = tw.Flush()
	if len(r.Accounts) == 0 {
		return
	}
	fmt.Fprintln(w, "accounts:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range r.Accounts {
		login := a.Login
		if login == "" {
			login = "its own login"
		}
		status := a.Status
		for _, w := range a.Windows {
			status += "; " + w.Text
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", a.Name, a.Agent, login, status)
	}
	_ = tw.Flush()
}

func dollars(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("$%.2f", v)
}

func tokenLimit(n int64) string {
	if n <= 0 {
		return "-"
	}
	return thousands(n)
}
