package cli

import (
	"strings"
	"testing"
	"time"

	"ralph/internal/stats"
)

func TestParseSince(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"2026-11-20", time.Date(2026, 11, 20, 0, 0, 0, 0, tokyo), false},
		{"2026-11-20T10:00:00Z", time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC), false},
		{"yesterday", time.Time{}, true},
		{"2026-13-01", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := parseSince(tt.in, tokyo)
		if (err != nil) != tt.err || !got.Equal(tt.want) {
			t.Errorf("parseSince(%q) = %v, %v", tt.in, got, err)
		}
	}
}

func TestStatsFormatting(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0s", 13: "13ms", 1540: "1.5s", 90_400: "1m30s", 3_723_000: "1h2m3s"} {
		if got := ms(n); got != want {
			t.Errorf("ms(%d) = %q, want %q", n, got, want)
		}
	}
}

// The table's columns line up whatever the widths of the numbers.
func TestPrintStatsAligned(t *testing.T) {
	r := stats.Report{
		Iterations: 2, Succeeded: 1, Failed: 1, SuccessRate: 0.5, TotalDurationMS: 61_000, AvgDurationMS: 30_500,
		First: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), Last: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC),
		Days: []stats.Day{
			{Date: "2026-11-20", Iterations: 1, Succeeded: 1, DurationMS: 1000, Usage: stats.Usage{InputTokens: 5, CostUSD: 0.01}},
			{Date: "2026-11-21", Iterations: 1, Failed: 1, DurationMS: 60_000, Usage: stats.Usage{InputTokens: 1_234_567, CostUSD: 12.5}},
		},
		Totals: stats.Usage{InputTokens: 1_234_572, CostUSD: 12.51},
		Exits:  []stats.Count{{Key: "circuit_breaker_open", Count: 1}},
	}
	var b strings.Builder
	printStats(&b, r, time.UTC)
	lines := strings.Split(b.String(), "\n")
	var table []string
	for _, l := range lines {
		if strings.Contains(l, "$") || strings.Contains(l, " cost") {
			table = append(table, l)
		}
	}
	if len(table) != 4 {
		t.Fatalf("table rows %q", table)
	}
	for _, l := range table[1:] {
		if len(l) != len(table[0]) {
			t.Errorf("row %q is not as wide as the header %q", l, table[0])
		}
	}
	if !strings.Contains(b.String(), "success rate 50.0%") || !strings.Contains(b.String(), "  circuit_breaker_open  1") {
		t.Errorf("output\n%s", b.String())
	}
}
