package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// historyOptions are `ralph task list`'s --all and its filters.
type historyOptions struct {
	All                    bool
	Session, State, Origin string
	Since                  string
}

// wanted says the list is of the history: --all, or any filter.
func (h historyOptions) wanted() bool {
	return h.All || h.Session != "" || h.State != "" || h.Origin != "" || h.Since != ""
}

func (h historyOptions) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"session": h.Session, "state": h.State, "origin": h.Origin, "since": h.Since} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// check refuses a filter the daemon would, before asking it.
func (h historyOptions) check() error {
	if h.State != "" && !fleet.State(h.State).Valid() {
		return usageError{fmt.Errorf("--state %q: want queued, running, waiting, halted, done or cancelled", h.State)}
	}
	if h.Origin != "" && !slices.Contains(serve.Origins, h.Origin) {
		return usageError{fmt.Errorf("--origin %q: want one of %s", h.Origin, strings.Join(serve.Origins, ", "))}
	}
	if _, err := serve.ParseSince(h.Since, time.Now()); err != nil {
		return usageError{fmt.Errorf("--%v", err)}
	}
	return nil
}

// listCmd is `ralph task list`: each session's current task, or with
// --all (or a filter) every task the daemon keeps.
func listCmd(o *taskOptions, verb func(string, string, cobra.PositionalArgs, func([]string) error) *cobra.Command) *cobra.Command {
	cmd := verb("list", "List each session's current task (--all: every kept task, finished ones too)", cobra.NoArgs,
		func([]string) error { return o.History.check() })
	f := cmd.Flags()
	f.BoolVar(&o.History.All, "all", false, "every task the daemon keeps (HISTORY_DAYS), newest first")
	f.StringVar(&o.History.Session, "session", "", "only this session's tasks (implies --all)")
	f.StringVar(&o.History.State, "state", "", "only tasks in this state: queued, running, waiting, halted, done, cancelled (implies --all)")
	f.StringVar(&o.History.Origin, "origin", "", "only tasks from "+strings.Join(serve.Origins, ", ")+" (implies --all)")
	f.StringVar(&o.History.Since, "since", "", "only tasks changed since a duration ago (36h, 7d) or a date (2026-11-20) (implies --all)")
	return cmd
}

// listHistory prints the kept tasks the filters select.
func listHistory(ctx context.Context, c *serve.Client, o *taskOptions) error {
	raw, err := c.History(ctx, o.History.query())
	if err != nil {
		return err
	}
	if o.JSON {
		_, err := fmt.Fprintf(o.IO.Out, "%s\n", strings.TrimSpace(string(raw)))
		return err
	}
	var list []serve.TaskView
	if err := json.Unmarshal(raw, &list); err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(o.IO.Out, "no tasks")
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSESSION\tSTATE\tLOOP\tORIGIN\tCOST\tCHANGED\tTITLE")
	for _, t := range list {
		title := t.Title
		if t.ExitReason != "" {
			title += "  (" + t.ExitReason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Session, t.State, loops(t), orDash(t.Origin), cost(t.CostUSD),
			t.UpdatedAt.Local().Format("2006-01-02 15:04"), title)
	}
	return tw.Flush()
}

// showTask prints one task's record.
func showTask(ctx context.Context, c *serve.Client, o *taskOptions) error {
	raw, err := c.Show(ctx, o.ID)
	if err != nil {
		return err
	}
	if o.JSON {
		_, err := fmt.Fprintf(o.IO.Out, "%s\n", strings.TrimSpace(string(raw)))
		return err
	}
	var r serve.TaskDetail
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	printRecord(o.IO.Out, r)
	return nil
}

// printRecord prints a task's history: what it is, where it came from
// and led to, each iteration's receipt, the questions and answers, and
// who did what from where.
func printRecord(w io.Writer, r serve.TaskDetail) {
	fmt.Fprintln(w, taskLine(r.TaskView))
	fmt.Fprintf(w, "  created %s, last changed %s\n", r.CreatedAt.Local().Format(time.DateTime), r.UpdatedAt.Local().Format(time.DateTime))
	fmt.Fprintf(w, "  origin: %s", orDash(r.Origin))
	if r.OriginURL != "" {
		fmt.Fprintf(w, " (%s)", r.OriginURL)
	}
	fmt.Fprintln(w)
	if r.PRURL != "" {
		fmt.Fprintf(w, "  pull request: %s%s\n", r.PRURL, draftNote(r.PRDraft))
	}
	if r.CostUSD > 0 {
		fmt.Fprintf(w, "  cost: %s\n", cost(r.CostUSD))
	}
	if r.Message != "" {
		fmt.Fprintf(w, "  why: %s\n", r.Message)
	}
	fmt.Fprintf(w, "\niterations (%d):\n", len(r.Iterations))
	for _, it := range r.Iterations {
		fmt.Fprintf(w, "  %d  %s  %s  %s\n", it.Loop, it.StartedAt.Local().Format(time.DateTime),
			(time.Duration(it.DurationMS) * time.Millisecond).Round(10*time.Millisecond), it.Decision)
		fmt.Fprintf(w, "     %s\n", iterationReceipt(it))
		if it.Why != "" {
			fmt.Fprintf(w, "     why: %s\n", it.Why)
		}
		for _, l := range decisionLines(it.Decisions, it.DecisionsDropped) {
			fmt.Fprintf(w, "     decided: %s\n", l)
		}
		if s := strings.TrimSpace(it.Summary); s != "" {
			fmt.Fprintf(w, "     said: %s\n", oneLine(s, 200))
		}
	}
	if len(r.Answers) > 0 || len(r.Questions) > 0 {
		fmt.Fprintln(w, "\nquestions and answers:")
		for _, a := range r.Answers {
			for _, q := range a.Questions {
				fmt.Fprintf(w, "  %s  Q: %s\n", a.At, q)
			}
			fmt.Fprintf(w, "  %s  A: %s\n", a.At, oneLine(a.Answer, 500))
		}
		for _, q := range r.Questions {
			fmt.Fprintf(w, "  (open)            Q: %s\n", q)
		}
	}
	if len(r.Commands) > 0 {
		fmt.Fprintln(w, "\ncommands:")
		for _, c := range r.Commands {
			fmt.Fprintf(w, "  %s  %s by %s\n", c.At.Local().Format(time.DateTime), c.Verb, c.By)
		}
	}
	fmt.Fprintf(w, "\ntask file: %s\n", r.TaskFile)
}

// iterationReceipt is an iteration's receipt on one line, as `ralph logs
// --iteration` prints it.
func iterationReceipt(it serve.IterationRecord) string {
	s := plural(it.FilesChanged, "file") + " changed"
	if it.LinesAdded > 0 || it.LinesRemoved > 0 {
		s += fmt.Sprintf(" (+%d −%d)", it.LinesAdded, it.LinesRemoved)
	}
	if it.Commit != "" {
		s += ", commit " + shortHash(it.Commit)
	}
	s += fmt.Sprintf(", %d tokens, $%.4f", it.InputTokens+it.OutputTokens+it.CacheReadTokens+it.CacheCreationTokens, it.CostUSD)
	if v := it.Verify; v != nil {
		s += fmt.Sprintf("; verify `%s` %s", v.Command, v.Outcome())
	}
	if it.Agent != "" {
		s += ", agent " + it.Agent
	}
	return s
}

func draftNote(draft bool) string {
	if draft {
		return " (draft)"
	}
	return ""
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
