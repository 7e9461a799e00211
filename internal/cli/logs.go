package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/agent"
	"ralph/internal/loop"
	"ralph/internal/store"
	"ralph/internal/transcript"
)

// pollInterval is how often -f looks for more: polling, not inotify, works
// on every file system, network mounts included.
const pollInterval = 250 * time.Millisecond

type logsOptions struct {
	IO        IO
	Project   projectFlags
	Follow    bool
	Iteration int // 0: ralph's own log
	Raw       bool
	Stderr    bool
	Lines     int
	LinesSet  bool // -n was given: with --iteration, only then is the output cut
	Poll      time.Duration
}

// newLogsCmd builds `ralph logs`; runF replaces runLogs in flag tests.
func newLogsCmd(ios IO, runF func(context.Context, *logsOptions) error) *cobra.Command {
	opts := &logsOptions{IO: ios, Poll: pollInterval}
	cmd := &cobra.Command{
		Use:   "logs",
		Short: "Show ralph's log, or what the agent did in one iteration",
		Long: `Without --iteration, prints the end of .ralph/logs/ralph.log (-n lines, 50 by
default); -f then follows it as it grows, across rotations, until Ctrl-C.

With --iteration N, prints the agent's output of iteration N, rendered for
reading: its prose, one "⚡ Tool target" line per tool call, tool results cut
to their first line, errors, and the final result with tokens and cost.
Claude Code json and stream-json, Codex exec --json, Gemini CLI json and
stream-json and plain text are recognised from the content. Iteration
numbers start again with every run; the newest log with that number is shown,
and its file is named on standard error. --raw prints the log as stored
(rendered output has secrets masked; raw output is the agent's own bytes),
--stderr the agent's standard error instead, -n only the last lines, and -f
follows the log while the iteration runs.`,
		Example: `  ralph logs -f
  ralph logs --iteration 7
  ralph logs --iteration 7 --raw | jq .
  ralph logs --iteration 7 --stderr -n 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.LinesSet = cmd.Flags().Changed("lines")
			switch {
			case cmd.Flags().Changed("iteration") && opts.Iteration < 1:
				return usageError{fmt.Errorf("--iteration %d: iterations are numbered from 1", opts.Iteration)}
			case opts.Lines < 0:
				return usageError{fmt.Errorf("-n %d: want 0 or more lines", opts.Lines)}
			case opts.Iteration == 0 && (opts.Raw || opts.Stderr):
				return usageError{errors.New("--raw and --stderr go with --iteration N")}
			}
			return orDefault(runF, runLogs)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, false)
	f := cmd.Flags()
	f.BoolVarP(&opts.Follow, "follow", "f", false, "keep printing what is appended, until Ctrl-C")
	f.IntVar(&opts.Iteration, "iteration", 0, "show the agent's output of iteration `N`")
	f.BoolVar(&opts.Raw, "raw", false, "with --iteration: print the log as stored, not rendered")
	f.BoolVar(&opts.Stderr, "stderr", false, "with --iteration: show the agent's standard error")
	f.IntVarP(&opts.Lines, "lines", "n", 50, "print only the last `LINES` lines")
	return cmd
}

func runLogs(ctx context.Context, opts *logsOptions) error {
	st, _, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	if !opts.Raw {
		// ralph.log and rendered agent output are masked and stripped of
		// escape sequences; --raw is the agent's bytes as stored.
		out, flush := safeWriter(opts.IO.Out)
		defer flush()
		opts.IO.Out = out
	}
	if opts.Iteration == 0 {
		return ralphLog(ctx, opts, st.LogFile())
	}
	return iterationLog(ctx, opts, st)
}

func writeTo(w io.Writer) func([]byte) error {
	return func(b []byte) error { _, err := w.Write(b); return err }
}

// openSized opens path and says how long it is now; a log that grows
// meanwhile is shown up to there, and followed from there.
func openSized(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

func ralphLog(ctx context.Context, opts *logsOptions, path string) error {
	f, size, err := openSized(path)
	if errors.Is(err, fs.ErrNotExist) {
		if !opts.Follow {
			return fmt.Errorf("no log yet: %s does not exist (has `ralph run` been started here?)", path)
		}
		fmt.Fprintf(opts.IO.Err, "ralph: waiting for %s\n", path)
		return follow(ctx, path, nil, 0, opts.Poll, writeTo(opts.IO.Out))
	}
	if err != nil {
		return err
	}
	end, err := tailLog(f, size, path, opts.Lines)
	if err == nil {
		_, err = opts.IO.Out.Write(end)
	}
	if err != nil || !opts.Follow {
		_ = f.Close()
		return err
	}
	return follow(ctx, path, f, size, opts.Poll, writeTo(opts.IO.Out))
}

// findIteration picks the newest log of iteration n for the given suffix
// (store.StdoutSuffix or StderrSuffix); numbers start again with every run,
// and the start time in the name tells the runs apart. It also returns how
// many logs had that number and, when there is none, the numbers there are.
func findIteration(dir string, n int, suffix string) (path string, same int, numbers []int, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", 0, nil, err
	}
	var newest string
	seen := map[int]bool{}
	for _, e := range entries {
		ln, ok := store.ParseIterationLogName(e.Name())
		if !ok || ln.Suffix != suffix || e.IsDir() || ln.N > math.MaxInt {
			continue
		}
		k := int(ln.N)
		seen[k] = true
		if k == n {
			same++
			if ln.Start > newest {
				newest, path = ln.Start, filepath.Join(dir, e.Name())
			}
		}
	}
	if path == "" {
		for k := range seen {
			numbers = append(numbers, k)
		}
		slices.Sort(numbers)
	}
	return path, same, numbers, nil
}

// ranges writes sorted numbers compactly: 1-5, 8, 10-12.
func ranges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ns[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func iterationLog(ctx context.Context, opts *logsOptions, st *store.Store) error {
	suffix, stream := store.StdoutSuffix, "output"
	if opts.Stderr {
		suffix, stream = store.StderrSuffix, "standard error"
	}
	path, same, numbers, err := findIteration(st.LogsDir(), opts.Iteration, suffix)
	if err == nil && path == "" && opts.Stderr {
		// A call that printed nothing on stderr leaves no stderr log.
		if out, _, _, err := findIteration(st.LogsDir(), opts.Iteration, store.StdoutSuffix); err == nil && out != "" {
			fmt.Fprintf(opts.IO.Err, "ralph: iteration %d standard error: none (the agent printed nothing there)\n", opts.Iteration)
			return nil
		}
	}
	switch {
	case err != nil:
		return err
	case path == "" && len(numbers) == 0:
		return fmt.Errorf("no iteration logs in %s yet (has `ralph run` been started here?)", st.LogsDir())
	case path == "":
		return fmt.Errorf("no log of iteration %d in %s; iterations with logs: %s", opts.Iteration, st.LogsDir(), ranges(numbers))
	}
	shown := path
	if rel, err := filepath.Rel(st.ProjectDir(), path); err == nil {
		shown = rel
	}
	note := ""
	if same > 1 {
		note = fmt.Sprintf(" (the newest of %d runs' iteration %d)", same, opts.Iteration)
	}
	f, size, err := openSized(path)
	if err != nil {
		return err
	}
	if size == 0 {
		note += " (empty)"
	}
	fmt.Fprintf(opts.IO.Err, "ralph: iteration %d %s: %s%s\n", opts.Iteration, stream, shown, note)
	if r := receipt(st, opts.Iteration); r != "" {
		fmt.Fprintf(opts.IO.Err, "ralph: iteration %d receipt: %s\n", opts.Iteration, r)
	}
	if opts.Raw {
		return rawLog(ctx, opts, f, size, path)
	}
	return renderedLog(ctx, opts, f, size, path, st.ProjectDir())
}

// rawLog prints the agent's bytes as stored.
func rawLog(ctx context.Context, opts *logsOptions, f *os.File, size int64, path string) error {
	var err error
	if opts.LinesSet {
		var end []byte
		if end, _, err = tail(f, size, opts.Lines); err == nil {
			_, err = opts.IO.Out.Write(end)
		}
	} else {
		_, err = io.Copy(opts.IO.Out, io.NewSectionReader(f, 0, size))
	}
	if err != nil || !opts.Follow {
		_ = f.Close()
		return err
	}
	return follow(ctx, path, f, size, opts.Poll, writeTo(opts.IO.Out))
}

// renderedLog prints the log rendered by package transcript. The agent's
// raw output may hold secrets (a file it read, a command's output), so the
// rendered text is masked with store.Redact.
func renderedLog(ctx context.Context, opts *logsOptions, f *os.File, size int64, path, projectDir string) error {
	var dst io.Writer = opts.IO.Out
	var cut bytes.Buffer
	if opts.LinesSet {
		dst = &cut // rendered whole, then cut to its last lines
	}
	var werr error
	r := transcript.NewRenderer(transcript.Options{Dir: projectDir}, func(e agent.LiveEvent) {
		if werr == nil {
			_, werr = io.WriteString(dst, store.Redact(e.String()))
		}
	})
	if _, err := io.Copy(r, io.NewSectionReader(f, 0, size)); err != nil {
		_ = f.Close()
		return err
	}
	if !opts.Follow {
		r.Flush() // when following, a line still being written ends later
	}
	if opts.LinesSet {
		end, _, err := tail(bytes.NewReader(cut.Bytes()), int64(cut.Len()), opts.Lines)
		if err == nil {
			_, err = opts.IO.Out.Write(end)
		}
		if werr == nil {
			werr = err
		}
		dst = opts.IO.Out
	}
	if werr != nil || !opts.Follow {
		_ = f.Close()
		return werr
	}
	err := follow(ctx, path, f, size, opts.Poll, func(b []byte) error {
		_, _ = r.Write(b)
		return werr
	})
	r.Flush()
	return errors.Join(err, werr)
}

// receipt sums up iteration n's record (the newest run's): what changed,
// what it cost, the decision, and the verify gate's check of a claim.
func receipt(st *store.Store, n int) string {
	var rec *loop.Metrics
	_, _ = store.ReadMetrics(st.MetricsFile(), func(_ int, raw json.RawMessage) error {
		var m loop.Metrics
		if json.Unmarshal(raw, &m) == nil && m.Loop == n {
			rec = &m
		}
		return nil
	})
	if rec == nil {
		return ""
	}
	s := plural(rec.FilesChanged, "file") + " changed"
	if rec.LinesAdded > 0 || rec.LinesRemoved > 0 {
		s += fmt.Sprintf(" (+%d −%d)", rec.LinesAdded, rec.LinesRemoved)
	}
	if rec.Commit != "" {
		s += ", commit " + shortHash(rec.Commit)
	}
	s += fmt.Sprintf(", %d tokens, $%.4f, %s",
		rec.InputTokens+rec.OutputTokens+rec.CacheReadTokens+rec.CacheCreationTokens, rec.CostUSD, rec.Decision)
	if v := rec.Verify; v != nil {
		s += fmt.Sprintf("; verify `%s` %s in %s", v.Command, v.Outcome(), (time.Duration(v.DurationMS) * time.Millisecond).Round(10*time.Millisecond))
		if !v.Passed() && v.Tail != "" {
			last := v.Tail
			if i := strings.LastIndexByte(last, '\n'); i >= 0 {
				last = last[i+1:]
			}
			s += ": " + last
		}
	}
	for _, l := range decisionLines(rec.Decisions, rec.DecisionsDropped) {
		s += "\n  decided: " + l
	}
	return store.Redact(s)
}

// decisionLines are a receipt's decisions on the gate's tool calls, one a
// line, with how many more the record did not keep.
func decisionLines(ds []loop.GateDecision, dropped int) []string {
	out := make([]string, 0, len(ds)+1)
	for _, g := range ds {
		out = append(out, g.String())
	}
	if dropped > 0 {
		out = append(out, fmt.Sprintf("… %d more not kept", dropped))
	}
	return out
}

func shortHash(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}
