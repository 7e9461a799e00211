package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"ralph/internal/budget"
)

// envTestClock moves `ralph serve`'s clock, for tests only: a daemon that
// must see the next day (its budgets' days) is started with the clock
// that far ahead. It says so loudly; nothing else reads it.
const envTestClock = "RALPH_TEST_CLOCK_OFFSET"

// testClock is the daemon's clock: the machine's, or moved by
// RALPH_TEST_CLOCK_OFFSET.
func testClock(getenv func(string) string, log io.Writer) (func() time.Time, error) {
	v := getenv(envTestClock)
	if v == "" {
		return time.Now, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: want a duration like 24h", envTestClock, v)
	}
	fmt.Fprintf(log, "ralph serve: warning: %s=%s: the clock runs %s ahead — a test setting\n", envTestClock, v, d)
	return func() time.Time { return time.Now().Add(d) }, nil
}

// budgetNote says which daily budgets hold ("" for none).
func budgetNote(c budget.Config) string {
	l := c.Limits
	if !l.Any() {
		return ""
	}
	var parts []string
	if l.FleetCost > 0 {
		parts = append(parts, fmt.Sprintf("fleet $%.2f", l.FleetCost))
	}
	if l.FleetTokens > 0 {
		parts = append(parts, fmt.Sprintf("fleet %s tokens", thousands(l.FleetTokens)))
	}
	if l.SessionCost > 0 {
		parts = append(parts, fmt.Sprintf("each session $%.2f", l.SessionCost))
	}
	if l.SessionTokens > 0 {
		parts = append(parts, fmt.Sprintf("each session %s tokens", thousands(l.SessionTokens)))
	}
	return fmt.Sprintf("daily budgets: %s a day, the day in %s", strings.Join(parts, ", "), c.Zone)
}
