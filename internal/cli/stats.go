package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/stats"
)

type statsOptions struct {
	IO      IO
	Project projectFlags
	Since   time.Time // zero: count every iteration
	Loc     *time.Location
	// Fleet asks the daemon for today's spend against its daily budgets
	// instead (Server, Home as for `ralph task`).
	Fleet        bool
	Server, Home string
}

// newStatsCmd builds `ralph stats`; runF replaces runStats in flag tests.
func newStatsCmd(ios IO, runF func(context.Context, *statsOptions) error) *cobra.Command {
	opts := &statsOptions{IO: ios, Loc: time.Local}
	var since string
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Sum up the iterations: success rate, durations, tokens and cost by day, exits by reason",
		Long: `Reads .ralph/logs/metrics.jsonl (one line per iteration) and prints how many
iterations ran and succeeded, their total and average duration, tokens and
cost by day (local time) and in total, and how often each decision, exit
reason, status and agent occurred. Lines that cannot be read are skipped
with a warning naming file and line.

--json prints the report as one object; its field names are a stable
contract for scripts (see the README).`,
		Example: `  ralph stats
  ralph stats --since 2026-11-01 --json | jq .totals.cost_usd`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.Since, err = parseSince(since, opts.Loc); err != nil {
				return err
			}
			return orDefault(runF, runStats)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, true)
	cmd.Flags().BoolVar(&opts.Fleet, "fleet", false, "today's spend of the fleet and each session of `ralph serve`, against its daily budgets")
	cmd.Flags().StringVar(&opts.Server, "server", "", "with --fleet: the daemon's URL (default as for `ralph task`)")
	cmd.Flags().StringVar(&opts.Home, "home", "", "with --fleet: RALPH_HOME, to read the daemon's token")
	cmd.Flags().StringVar(&since, "since", "", "count only iterations from this day (YYYY-MM-DD, local time) or instant (RFC3339) on")
	return cmd
}

// parseSince reads --since: a calendar day in loc, or an RFC3339 instant.
func parseSince(s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation(stats.DayLayout, s, loc); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, usageError{fmt.Errorf("--since %q: want a day such as 2026-11-20 or an RFC3339 time", s)}
}

func runStats(ctx context.Context, opts *statsOptions) error {
	if opts.Fleet {
		return fleetStats(ctx, opts)
	}
	since := opts.Since
	st, _, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	r, err := stats.ReadFile(st.MetricsFile(), stats.Options{Loc: opts.Loc, Since: since})
	if errors.Is(err, fs.ErrNotExist) {
		r, err = stats.Compute(nil, opts.Loc), nil // no iteration has ended yet
	}
	if err != nil {
		return err
	}
	for _, w := range r.Warnings {
		fmt.Fprintln(opts.IO.Err, "ralph: warning:", w)
	}
	if opts.Project.json {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	if r.Iterations == 0 {
		if since.IsZero() {
			fmt.Fprintln(opts.IO.Out, "no iterations recorded yet")
		} else {
			fmt.Fprintf(opts.IO.Out, "no iterations recorded since %s\n", since.In(opts.Loc).Format(time.RFC3339))
		}
		return nil
	}
	printStats(opts.IO.Out, r, opts.Loc)
	return nil
}

func printStats(w io.Writer, r stats.Report, loc *time.Location) {
	fmt.Fprintf(w, "iterations: %d (%d succeeded, %d failed", r.Iterations, r.Succeeded, r.Failed)
	if r.TimedOut > 0 {
		fmt.Fprintf(w, ", %d timed out", r.TimedOut)
	}
	fmt.Fprintf(w, "), success rate %.1f%%\n", 100*r.SuccessRate)
	fmt.Fprintf(w, "duration:   %s in total, %s on average\n", ms(r.TotalDurationMS), ms(r.AvgDurationMS))
	fmt.Fprintf(w, "period:     %s to %s\n\n", r.First.In(loc).Format("2006-01-02 15:04"), r.Last.In(loc).Format("2006-01-02 15:04"))

	// Numbers align right; the day column is of fixed width anyway.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "day\titerations\tfailed\tduration\tinput\toutput\tcache read\tcache write\tcost\t")
	row := func(label string, n, failed int, d int64, u stats.Usage) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t$%.4f\t\n", label, n, failed, ms(d),
			thousands(u.InputTokens), thousands(u.OutputTokens), thousands(u.CacheReadTokens), thousands(u.CacheCreationTokens), u.CostUSD)
	}
	for _, d := range r.Days {
		row(d.Date, d.Iterations, d.Failed, d.DurationMS, d.Usage)
	}
	row("total", r.Iterations, r.Failed, r.TotalDurationMS, r.Totals)
	_ = tw.Flush()

	for _, sec := range []struct {
		title  string
		counts []stats.Count
	}{
		{"exits by reason", r.Exits}, {"decisions", r.Decisions}, {"statuses", r.Statuses}, {"agents", r.Agents},
	} {
		if len(sec.counts) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", sec.title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range sec.counts {
			fmt.Fprintf(tw, "  %s\t%d\n", c.Key, c.Count)
		}
		_ = tw.Flush()
	}
}

// ms shows a duration as people read it: milliseconds below a second,
// tenths below a minute, whole seconds above.
func ms(n int64) string {
	d := time.Duration(n) * time.Millisecond
	switch {
	case d < time.Second:
		return d.String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// thousands writes n with thousands separators: token counts run to millions.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
