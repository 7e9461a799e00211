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

func newPauseCmd(ios IO) *cobra.Command {
	var p projectFlags
	cmd := &cobra.Command{
		Use:   "pause",
		Short: "Pause the loop after its current iteration (it holds until `ralph resume`)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, _, err := p.open(ios)
			if err != nil {
				return err
			}
			if err := control.Open(st.RalphDir()).Pause("ralph pause", time.Now()); err != nil {
				return err
			}
			if pid, ok := loopRunning(st); ok {
				fmt.Fprintf(ios.Out, "pause requested: the loop (pid %d) pauses after its current iteration; `ralph resume` continues\n", pid)
			} else {
				fmt.Fprintln(ios.Out, "pause requested: no loop is running, so the next `ralph run` starts paused; `ralph resume` lifts it")
			}
			return nil
		},
	}
	p.add(cmd, false)
	return cmd
}

func newResumeCmd(ios IO) *cobra.Command {
	var p projectFlags
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Lift a pause: the loop goes on with its next iteration",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, _, err := p.open(ios)
			if err != nil {
				return err
			}
			if err := control.Open(st.RalphDir()).Resume(time.Now()); err != nil {
				return err
			}
			fmt.Fprintln(ios.Out, "resumed")
			return nil
		},
	}
	p.add(cmd, false)
	return cmd
}

func newStopCmd(ios IO) *cobra.Command {
	var p projectFlags
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the loop after its current iteration (at once if it is waiting)",
		Long: `Asks the running loop to stop after its current iteration; a loop that is
waiting (usage limit, rate limit, delay) or paused stops within a second. The
loop exits with reason "interrupted" (exit code 130). With --wait, ralph stop
returns only when the loop has exited (or the wait timed out, exit 1).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, _, err := p.open(ios)
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
			fmt.Fprintf(ios.Out, "stop requested: the loop (pid %d) stops after its current iteration\n", pid)
			if wait <= 0 {
				return nil
			}
			return waitForExit(cmd.Context(), st, wait)
		},
	}
	p.add(cmd, false)
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the loop to exit, e.g. 20m")
	return cmd
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
