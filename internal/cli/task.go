package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/fleet"
	"ralph/internal/requests"
	"ralph/internal/serve"
)

const taskLong = `Drives the tasks of a running ` + "`ralph serve`" + ` through its API.

The server is --server URL, else $RALPH_SERVER, else the address the daemon
of RALPH_HOME recorded when it started, else ` + serve.DefaultServer + `.
The token is $RALPH_API_TOKEN, else the daemon's RALPH_HOME/api-token
(--home, $RALPH_HOME, else $XDG_STATE_HOME/ralph, else ~/.local/state/ralph).

Exit codes: 0 done, 1 any error (refused request, unreachable server; the
reason is printed).`

type taskOptions struct {
	IO     IO
	Server string
	Home   string
	JSON   bool
	// Verb is the subcommand; Session, Title (start), MaxLoops (loop, 0
	// the daemon's default), Text (answer, deny's reason) and Item
	// (approve, deny) its arguments.
	Verb     string
	Session  string
	Title    string
	MaxLoops int
	Text     string
	Item     string
	// ForTask is approve's --task: allow the exact call for the rest of
	// the task.
	ForTask bool
	// StartLoop is start's --loop N: create and loop in one step.
	StartLoop int
	// History is list's --all and its filters; ID is show's task.
	History historyOptions
	ID      string
}

// parseMax reads a verb's optional MAX after its session.
func parseMax(a []string, max *int) error {
	if len(a) == 2 {
		v, err := strconv.Atoi(a[1])
		if err != nil || v < 1 {
			return usageError{fmt.Errorf("MAX %q: want a whole number of iterations, 1 or more", a[1])}
		}
		*max = v
	}
	return nil
}

// newTaskCmd builds `ralph task` and its verbs; runF replaces runTask in
// flag tests.
func newTaskCmd(ios IO, runF func(context.Context, *taskOptions) error) *cobra.Command {
	o := &taskOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Start, loop, watch, stop and answer the tasks of `ralph serve`",
		Long:  taskLong,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.Server, "server", "", "the daemon's URL (default $RALPH_SERVER or "+serve.DefaultServer+")")
	pf.StringVar(&o.Home, "home", "", "RALPH_HOME, to read the daemon's token")
	pf.BoolVar(&o.JSON, "json", false, "print the task(s) as JSON")
	// verb parses a subcommand's arguments into o, so that a bad one is a
	// usage error before anything is asked of the daemon.
	verb := func(use, short string, args cobra.PositionalArgs, parse func(a []string) error) *cobra.Command {
		name, _, _ := strings.Cut(use, " ")
		return &cobra.Command{Use: use, Short: short, Args: args, RunE: func(cmd *cobra.Command, a []string) error {
			o.Verb = name
			if len(a) > 0 {
				o.Session = a[0]
			}
			if parse != nil {
				if err := parse(a); err != nil {
					return err
				}
			}
			return orDefault(runF, runTask)(cmd.Context(), o)
		}}
	}
	start := verb("start SESSION TITLE…", "Create a task on a free session (--loop N: and loop it at once)", cobra.MinimumNArgs(2),
		func(a []string) error {
			o.Title = strings.Join(a[1:], " ")
			if o.StartLoop < 0 {
				return usageError{fmt.Errorf("--loop %d: want a whole number of iterations, 1 or more", o.StartLoop)}
			}
			return nil
		})
	approve := verb("approve SESSION ID", "Allow the tool call the agent waits on (ID as the task shows it: a1): once, or with --task for the rest of the task", cobra.ExactArgs(2),
		func(a []string) error { o.Item = a[1]; return nil })
	approve.Flags().BoolVar(&o.ForTask, "task", false, "allow this exact tool (for Bash: this exact command) for the rest of the task, without asking again")
	start.Flags().IntVar(&o.StartLoop, "loop", 0, "loop the new task at once, for up to N iterations (one step instead of start, then loop)")
	cmd.AddCommand(
		start,
		verb("loop SESSION [MAX]", "Run the task's loop for up to MAX iterations (default 100)", cobra.RangeArgs(1, 2),
			func(a []string) error { return parseMax(a, &o.MaxLoops) }),
		verb("status [SESSION]", "Show a session's task (all tasks without SESSION)", cobra.MaximumNArgs(1), nil),
		listCmd(o, verb),
		verb("show ID", "Show a task (finished ones too): its iterations with their receipts, questions and answers, who did what, its links", cobra.ExactArgs(1),
			func(a []string) error { o.ID, o.Session = a[0], ""; return nil }),
		verb("stop SESSION", "Stop the task's loop after its current iteration", cobra.ExactArgs(1), nil),
		verb("cancel SESSION", "Give the task up (its loop ends now, its file is archived)", cobra.ExactArgs(1), nil),
		verb("reset SESSION", "Reset the session's circuit breaker", cobra.ExactArgs(1), nil),
		verb("retry SESSION [MAX]", "Reset the breaker of a halted task and loop it again (what a request's /ralph retry does)", cobra.RangeArgs(1, 2),
			func(a []string) error { return parseMax(a, &o.MaxLoops) }),
		verb("circuit SESSION", "Show the session's circuit breaker: its state, counts, reason and recent errors", cobra.ExactArgs(1), nil),
		verb("pause SESSION", "Hold the running loop before its next iteration (it keeps its slot)", cobra.ExactArgs(1), nil),
		verb("resume SESSION", "Let a paused loop go on", cobra.ExactArgs(1), nil),
		verb("answer SESSION TEXT…", "Answer the task's question; its loop resumes", cobra.MinimumNArgs(2),
			func(a []string) error { o.Text = strings.Join(a[1:], " "); return nil }),
		approve,
		verb("deny SESSION ID [REASON…]", "Refuse the tool call the agent waits on; it reads REASON", cobra.MinimumNArgs(2),
			func(a []string) error { o.Item, o.Text = a[1], strings.Join(a[2:], " "); return nil }),
		verb("watchdog", "Show what the watchdog reads: each session's tmux target and what it last saw", cobra.NoArgs, nil),
	)
	return cmd
}

// runTask asks the daemon and prints its answer.
func runTask(ctx context.Context, o *taskOptions) error {
	c, err := o.client()
	if err != nil {
		return err
	}
	var raw json.RawMessage
	switch o.Verb {
	case "status", "circuit":
		if o.Session == "" {
			raw, err = c.List(ctx)
		} else {
			raw, err = c.Status(ctx, o.Session)
		}
		if err == nil && o.Verb == "circuit" && !o.JSON {
			return printCircuit(o.IO.Out, raw)
		}
	case "list":
		if o.History.wanted() {
			return listHistory(ctx, c, o)
		}
		raw, err = c.List(ctx)
	case "show":
		return showTask(ctx, c, o)
	case "watchdog":
		if raw, err = c.Watchdog(ctx); err == nil {
			return printWatchdog(o.IO.Out, raw, o.JSON)
		}
	default:
		cmd := fleet.Command{Verb: fleet.Verb(o.Verb), Session: o.Session, Title: o.Title, MaxLoops: o.MaxLoops, Text: o.Text, Item: o.Item, ForTask: o.ForTask}
		if o.Verb == "start" && o.StartLoop > 0 {
			cmd.Verb, cmd.MaxLoops = fleet.StartLoop, o.StartLoop
		}
		raw, err = c.Do(ctx, cmd)
	}
	if err != nil {
		return err
	}
	return printAnswer(o.IO.Out, raw, o.JSON, o.Verb)
}

func (o *taskOptions) client() (*serve.Client, error) {
	home := o.Home
	if home == "" {
		var err error
		if home, err = serve.DefaultHome(); err != nil {
			return nil, err
		}
	}
	// --server, then $RALPH_SERVER, then the address the daemon of this
	// home recorded, then the default.
	base := o.Server
	if base == "" {
		base = os.Getenv("RALPH_SERVER")
	}
	if base == "" {
		base = serve.Address(serve.Home(home))
	}
	if base == "" {
		base = serve.DefaultServer
	}
	tok, err := serve.Token(serve.Home(home), false)
	if err != nil {
		return nil, err
	}
	return &serve.Client{Base: base, Token: tok, Surface: fleet.SurfaceCLI, User: osUser()}, nil
}

// printAnswer prints the daemon's answer to verb: a list as aligned
// columns, one task as its status, and for a verb that changed something
// first a line that says what it did.
func printAnswer(w io.Writer, raw json.RawMessage, asJSON bool, verb string) error {
	if asJSON {
		_, err := fmt.Fprintf(w, "%s\n", strings.TrimSpace(string(raw)))
		return err
	}
	var list []serve.TaskView
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
		if err := json.Unmarshal(raw, &list); err != nil {
			return err
		}
		if len(list) == 0 {
			fmt.Fprintln(w, "no tasks")
			return nil
		}
		return printTaskTable(w, list)
	}
	var t serve.TaskView
	if err := json.Unmarshal(raw, &t); err != nil {
		return err
	}
	if did := verbDid(verb, t); did != "" {
		fmt.Fprintln(w, did)
	}
	printTaskStatus(w, t)
	return nil
}

// verbDid says what a verb did to the task, in the words of its effect.
func verbDid(verb string, t serve.TaskView) string {
	who := fmt.Sprintf("%s (task %s)", t.Session, t.ID)
	switch verb {
	case "start":
		if t.State != "waiting" {
			return fmt.Sprintf("started %s: %s; looping, at most %d iterations", who, t.Title, t.MaxLoops)
		}
		return fmt.Sprintf("started %s: %s; run it with: ralph task loop %s [MAX]", who, t.Title, t.Session)
	case "retry":
		return fmt.Sprintf("%s: breaker reset and looping again, at most %d iterations in all", who, t.MaxLoops)
	case "loop":
		return fmt.Sprintf("%s: looping, at most %d iterations in all (%d done)", who, t.MaxLoops, t.LoopCount)
	case "stop":
		if t.State == "running" {
			return who + ": stopping after the iteration in progress; `ralph task loop` goes on later"
		}
		return fmt.Sprintf("%s: stopped; it is %s", who, t.State)
	case "pause":
		return who + ": paused; it holds before its next iteration until `ralph task resume " + t.Session + "`"
	case "resume":
		return who + ": resumed"
	case "cancel":
		return who + ": cancelled"
	case "reset":
		return fmt.Sprintf("%s: circuit breaker reset (now %s)", who, t.CircuitBreaker.State)
	case "answer":
		return who + ": answered; the loop resumes in the same agent session"
	}
	return ""
}

// printTaskTable prints tasks as aligned columns, one row each.
func printTaskTable(w io.Writer, list []serve.TaskView) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tID\tSTATE\tLOOP\tORIGIN\tCOST\tTITLE")
	for _, t := range list {
		title := t.Title
		if t.ExitReason != "" {
			title += "  (" + t.ExitReason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Session, t.ID, t.State, loops(t), orDash(t.Origin), cost(t.CostUSD), title)
	}
	return tw.Flush()
}

func loops(t serve.TaskView) string {
	if t.MaxLoops == 0 {
		return strconv.Itoa(t.LoopCount)
	}
	return fmt.Sprintf("%d/%d", t.LoopCount, t.MaxLoops)
}

func cost(usd float64) string {
	if usd == 0 {
		return "-"
	}
	return fmt.Sprintf("$%.2f", usd)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printTaskStatus prints one task: its line, then what a person needs to
// know of it (where it came from, what it cost, what it made, why it
// stopped, what to do next).
func printTaskStatus(w io.Writer, t serve.TaskView) {
	fmt.Fprintln(w, taskLine(t))
	fmt.Fprintf(w, "  origin: %s", orDash(t.Origin))
	if t.OriginURL != "" {
		fmt.Fprintf(w, " (%s)", t.OriginURL)
	}
	if t.CostUSD > 0 {
		fmt.Fprintf(w, "   cost: %s", cost(t.CostUSD))
	}
	fmt.Fprintln(w)
	if t.PRURL != "" {
		fmt.Fprintf(w, "  pull request: %s%s\n", t.PRURL, draftNote(t.PRDraft))
	}
	b := t.CircuitBreaker
	fmt.Fprintf(w, "  breaker %s (no progress %d, same error %d, opened %d×)", b.State, b.ConsecutiveNoProgress, b.ConsecutiveSameError, b.TotalOpens)
	if b.Reason != "" {
		fmt.Fprintf(w, ": %s", b.Reason)
	}
	fmt.Fprintln(w)
	if t.Activity != "" && (t.State == "running" || t.State == "waiting" || t.State == "queued") {
		fmt.Fprintf(w, "  now: %s", t.Activity)
		if !t.WaitUntil.IsZero() {
			fmt.Fprintf(w, " until %s", t.WaitUntil.Local().Format(time.DateTime))
		}
		fmt.Fprintln(w)
	}
	if t.Summary != "" {
		fmt.Fprintf(w, "  summary: %s\n", t.Summary)
	}
	for _, h := range t.History {
		lines := ""
		if h.LinesAdded > 0 || h.LinesRemoved > 0 {
			lines = fmt.Sprintf(" (+%d −%d)", h.LinesAdded, h.LinesRemoved)
		}
		fmt.Fprintf(w, "  loop %d: %d files%s, %d errors, %s%s\n", h.Loop, h.FilesModified, lines, h.ErrorsDetected, orNone(h.StatusBlock["STATUS"]), verifyNote(h))
	}
	for _, p := range t.Pending {
		fmt.Fprintf(w, "  pending %s %s: %s\n", p.ID, p.Kind, p.What)
	}
	for _, q := range t.Questions {
		fmt.Fprintf(w, "  question: %s\n", q)
	}
	if len(t.Questions) > 0 {
		fmt.Fprintf(w, "  answer with: ralph task answer %s TEXT…\n", t.Session)
	}
	if t.Message != "" {
		fmt.Fprintf(w, "  why: %s\n", t.Message)
	}
	switch {
	case t.State == "halted":
		fmt.Fprintf(w, "  next: ralph task reset %s, then ralph task loop %s [MAX]\n", t.Session, t.Session)
	case t.State == "waiting" && t.Message == requests.WaitingForReview:
		// The pull request's reviews and checks start the next round; a
		// `loop` would start one with nothing new to work on.
		fmt.Fprintf(w, "  next: a review or a failing check on the pull request (or ralph task retry %s for a round now)\n", t.Session)
	case t.State == "waiting" && len(t.Questions) == 0:
		fmt.Fprintf(w, "  next: ralph task loop %s [MAX]\n", t.Session)
	}
	for _, c := range t.Commands {
		fmt.Fprintf(w, "  %s: %s by %s\n", c.At.Local().Format(time.DateTime), c.Verb, c.By)
	}
	fmt.Fprintf(w, "  task file: %s\n", t.TaskFile)
}

func taskLine(t serve.TaskView) string {
	s := fmt.Sprintf("%s  %s  %s  loop %s  %s", t.Session, t.ID, t.State, loops(t), t.Title)
	if t.ExitReason != "" {
		s += "  (" + t.ExitReason + ")"
	}
	return s
}

// printWatchdog prints the watchdog's board, as JSON or a line a session.
func printWatchdog(w io.Writer, raw json.RawMessage, asJSON bool) error {
	if asJSON {
		_, err := fmt.Fprintf(w, "%s\n", strings.TrimSpace(string(raw)))
		return err
	}
	var list []serve.WatchStatus
	if err := json.Unmarshal(raw, &list); err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "the watchdog has looked at no session yet (or ralph serve runs with --watch-interval 0)")
	}
	for _, s := range list {
		line := fmt.Sprintf("%-8s %-12s", s.Session, s.Target)
		if s.Active {
			line += fmt.Sprintf(" reading, task %s", s.TaskID)
			if s.Status != "" {
				line += ", last STATUS " + s.Status
			}
			if !s.Seen.IsZero() {
				line += ", changed " + s.Seen.Local().Format(time.DateTime)
			}
		} else {
			line += " idle: " + s.Message
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// osUser is who runs `ralph task`, recorded with its commands.
func osUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return os.Getenv("LOGNAME")
}

// printCircuit shows a session's circuit breaker, as Telegram's /circuit
// does: its state and counts, why it opened, and its recent errors.
func printCircuit(w io.Writer, raw json.RawMessage) error {
	var t serve.TaskView
	if err := json.Unmarshal(raw, &t); err != nil {
		return err
	}
	b := t.CircuitBreaker
	fmt.Fprintf(w, "%s (task %s, loop %s): breaker %s\n", t.Session, t.ID, loops(t), b.State)
	fmt.Fprintf(w, "  no progress %d in a row, same error %d in a row, last progress at loop %d, opened %d×\n",
		b.ConsecutiveNoProgress, b.ConsecutiveSameError, b.LastProgressLoop, b.TotalOpens)
	if b.Reason != "" {
		fmt.Fprintf(w, "  reason: %s\n", b.Reason)
	}
	if !b.LastChangeAt.IsZero() {
		fmt.Fprintf(w, "  last change: %s\n", b.LastChangeAt.Local().Format(time.DateTime))
	}
	for _, e := range b.ErrorHistory {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
	if b.State != "" && b.State != "CLOSED" {
		fmt.Fprintf(w, "  next: ralph task reset %s (or ralph task retry %s)\n", t.Session, t.Session)
	}
	return nil
}

// verifyNote is what the verify gate made of an iteration's claim.
func verifyNote(h serve.HistoryItem) string {
	switch v := h.Verify; {
	case v == nil:
		return ""
	case h.Verified:
		return fmt.Sprintf(", verified (`%s` passed)", v.Command)
	}
	return fmt.Sprintf(", not verified (`%s` %s)", h.Verify.Command, h.Verify.Outcome())
}
