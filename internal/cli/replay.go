package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"ralph/internal/replay"
	"ralph/internal/serve"
)

type replayOptions struct {
	IO     IO
	Target string // a project directory, its .ralph/, a recording file, or a daemon's task id
	Server string
	Home   string
}

// newReplayCmd builds `ralph replay`; runF replaces runReplay in flag tests.
func newReplayCmd(ios IO, runF func(context.Context, *replayOptions) error) *cobra.Command {
	o := &replayOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "replay [DIR | FILE | TASK]",
		Short: "Make a loop's recorded decisions again with today's rules and show where they differ",
		Long: `Feeds what each recorded iteration saw (the observations, the state before
it, the policy in force) through this build's decision rules and prints each
recorded decision beside today's, marking every difference (kind, reason,
agent, wait).

What it reads:
  DIR   a project (default .): its .ralph/logs/metrics.jsonl; DIR may be the
        .ralph/ directory itself
  FILE  a metrics.jsonl, or a decision trace written by ` + "`ralph run`" + ` with
        $RALPH_TRACE set (every decision of a run, replayed in order)
  TASK  a task id of ` + "`ralph serve`" + ` (t12): its kept iterations, through the
        API (--server, $RALPH_SERVER, the address of RALPH_HOME's daemon), or
        from the daemon's store under RALPH_HOME when no daemon answers

Records written before ralph kept an iteration's observations are listed as
not replayable. A line that is not a record is an error naming file and line.

Exit codes: 0 every decision agrees, 20 at least one differs, 21 nothing
could be replayed, 1 any other error (a bad record, an unreachable source).`,
		Example: `  ralph replay
  ralph replay ~/src/api/.ralph
  ralph replay t12
  RALPH_TRACE=run.jsonl ralph run && ralph replay run.jsonl`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			o.Target = "."
			if len(a) == 1 {
				o.Target = a[0]
			}
			return orDefault(runF, runReplay)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Server, "server", "", "the daemon's URL, for a task id (default $RALPH_SERVER or "+serve.DefaultServer+")")
	cmd.Flags().StringVar(&o.Home, "home", "", "RALPH_HOME, for a task id: the daemon's token and store")
	return cmd
}

func runReplay(ctx context.Context, o *replayOptions) error {
	rep, notes, err := replayTarget(ctx, o)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(o.IO.Err, "ralph: "+safeText(n))
	}
	w, flush := safeWriter(o.IO.Out)
	err = replay.Print(w, rep)
	flush()
	if err != nil {
		return err
	}
	switch code := rep.ExitCode(); code {
	case 0:
		return nil
	case replay.ExitNothing:
		return &ExitError{Code: code, Err: errors.New("nothing to replay: no record holds the inputs of its decisions")}
	default:
		return &ExitError{Code: code}
	}
}

// replayTarget reads what o names and replays it with today's rules.
func replayTarget(ctx context.Context, o *replayOptions) (replay.Report, []string, error) {
	info, err := os.Stat(o.Target)
	switch {
	case err == nil && info.IsDir():
		file, err := metricsIn(o)
		if err != nil {
			return replay.Report{}, nil, err
		}
		return replayFile(file)
	case err == nil:
		return replayFile(o.Target)
	case !errors.Is(err, fs.ErrNotExist):
		return replay.Report{}, nil, err
	case filepath.Base(o.Target) != o.Target || o.Target == "." || o.Target == "..":
		return replay.Report{}, nil, fmt.Errorf("%s: no such file or directory", o.Target)
	}
	return replayTask(ctx, o)
}

// metricsIn finds the iteration records of the project (or .ralph/
// directory) o.Target names.
func metricsIn(o *replayOptions) (string, error) {
	dir := o.Target
	if own := filepath.Join(dir, "logs", "metrics.jsonl"); filepath.Base(filepath.Clean(dir)) == ".ralph" {
		return own, nil
	}
	p := projectFlags{dir: dir}
	st, _, err := p.open(o.IO)
	if err != nil {
		return "", err
	}
	// Named as the user named the project, not by its absolute path.
	file := st.MetricsFile()
	if abs, err := filepath.Abs(dir); err == nil {
		if rel, err := filepath.Rel(abs, file); err == nil && filepath.IsLocal(rel) {
			file = filepath.Join(dir, rel)
		}
	}
	return file, nil
}

func replayFile(path string) (replay.Report, []string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return replay.Report{}, nil, fmt.Errorf("%s: no iteration records (no iteration has ended there yet)", path)
	}
	if err != nil {
		return replay.Report{}, nil, err
	}
	defer f.Close()
	rec, err := replay.Read(path, f)
	if err != nil {
		return replay.Report{}, nil, err
	}
	if len(rec.Trace) > 0 {
		rep, err := replay.Traces(rec.Trace, replay.Today())
		return rep, rec.Notes, err
	}
	return replay.Records(rec.Records, replay.Today()), rec.Notes, nil
}

// replayTask reads a daemon task's kept iterations: through the API, or
// from the store itself when no daemon answers.
func replayTask(ctx context.Context, o *replayOptions) (replay.Report, []string, error) {
	t := &taskOptions{IO: o.IO, Server: o.Server, Home: o.Home}
	var tr serve.TaskReplay
	c, err := t.client()
	if err == nil {
		tr, err = c.Replay(ctx, o.Target)
	}
	var api *serve.APIError
	if err != nil && !errors.As(err, &api) {
		home := o.Home
		if home == "" {
			if home, err = serve.DefaultHome(); err != nil {
				return replay.Report{}, nil, err
			}
		}
		var serr error
		if tr, serr = serve.ReadReplay(serve.Home(home), o.Target); serr != nil {
			return replay.Report{}, nil, fmt.Errorf("task %s: no daemon answered (%v), and its store could not be read: %w", o.Target, err, serr)
		}
		err = nil
	}
	if err != nil {
		return replay.Report{}, nil, fmt.Errorf("task %s: %w", o.Target, err)
	}
	recs := make([]replay.Record, 0, len(tr.Records))
	for _, r := range tr.Records {
		where := fmt.Sprintf("%s#%d", tr.Task, r.Loop)
		m, err := replay.DecodeRecord(r.Record)
		if err != nil {
			return replay.Report{}, nil, fmt.Errorf("task %s, iteration row of loop %d: %w", tr.Task, r.Loop, err)
		}
		recs = append(recs, replay.Record{Where: where, Metric: m})
	}
	if len(recs) == 0 {
		return replay.Report{}, nil, fmt.Errorf("task %s: no iterations kept", tr.Task)
	}
	return replay.Records(recs, replay.Today()), nil, nil
}
