package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/control"
	"ralph/internal/store"
)

// loopRunning tells whether a `ralph run` holds the project's lock, and its
// pid. Probing the lock, rather than trusting status.json, is right even
// after a crash that left "running" behind.
func loopRunning(st *store.Store) (pid int, running bool) {
	l, err := store.AcquireLock(st.LockFile())
	if err == nil {
		l.Release()
		return 0, false
	}
	var le *store.LockedError
	if errors.As(err, &le) {
		return le.PID, true
	}
	return 0, false
}

type pauseOptions struct {
	IO      IO
	Project projectFlags
}

// newPauseCmd builds `ralph pause`; runF replaces runPause in flag tests.
func newPauseCmd(ios IO, runF func(context.Context, *pauseOptions) error) *cobra.Command {
	opts := &pauseOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "pause",
		Short: "Pause the loop after its current iteration (it holds until `ralph resume`)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runPause)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, false)
	return cmd
}

func runPause(_ context.Context, opts *pauseOptions) error {
	st, _, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	if err := control.Open(st.RalphDir()).Pause("ralph pause", time.Now()); err != nil {
		return err
	}
	if pid, ok := loopRunning(st); ok {
		fmt.Fprintf(opts.IO.Out, "pause requested: the loop (pid %d) pauses after its current iteration; `ralph resume` continues\n", pid)
	} else {
		fmt.Fprintln(opts.IO.Out, "pause requested: no loop is running, so the next `ralph run` starts paused; `ralph resume` lifts it")
	}
	return nil
}

type resumeOptions struct {
	IO      IO
	Project projectFlags
}

// newResumeCmd builds `ralph resume`; runF replaces runResume in flag tests.
func newResumeCmd(ios IO, runF func(context.Context, *resumeOptions) error) *cobra.Command {
	opts := &resumeOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Lift a pause: the loop goes on with its next iteration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runResume)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, false)
	return cmd
}

func runResume(_ context.Context, opts *resumeOptions) error {
	st, _, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	if err := control.Open(st.RalphDir()).Resume(time.Now()); err != nil {
		return err
	}
	fmt.Fprintln(opts.IO.Out, "resumed")
	return nil
}

type stopOptions struct {
	IO      IO
	Project projectFlags
	Wait    time.Duration // 0: return once the stop is requested
}

// newStopCmd builds `ralph stop`; runF replaces runStop in flag tests.
func newStopCmd(ios IO, runF func(context.Context, *stopOptions) error) *cobra.Command {
	opts := &stopOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the loop after its current iteration (at once if it is waiting)",
		Long: `Asks the running loop to stop after its current iteration; a loop that is
waiting (usage limit, rate limit, delay) or paused stops within a second. The
loop exits with reason "interrupted" (exit code 130). With --wait, ralph stop
returns only when the loop has exited (or the wait timed out, exit 1).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runStop)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, false)
	cmd.Flags().DurationVar(&opts.Wait, "wait", 0, "wait up to this long for the loop to exit, e.g. 20m")
	return cmd
}

func runStop(ctx context.Context, opts *stopOptions) error {
	st, _, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	pid, ok := loopRunning(st)
	if !ok {
		return fmt.Errorf("no loop is running in %s", st.ProjectDir())
	}
	if err := control.Open(st.RalphDir()).Stop("ralph stop", time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "stop requested: the loop (pid %d) stops after its current iteration\n", pid)
	if opts.Wait <= 0 {
		return nil
	}
	return waitForExit(ctx, st, opts.Wait)
}

func waitForExit(ctx context.Context, st *store.Store, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		if _, ok := loopRunning(st); !ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the loop is still running after %s", limit)
		case <-t.C:
		}
	}
}
