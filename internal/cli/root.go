// Package cli wires ralph's commands: flag parsing and plumbing only. The
// decisions live in the packages each command calls.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// IO is where a command reads and writes; tests pass buffers.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// Main runs ralph with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := interruptContext(stderr)
	defer stop()
	root := NewRoot(IO{In: stdin, Out: stdout, Err: stderr})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return exitCode(err, stderr)
}

// NewRoot builds the command tree.
func NewRoot(ios IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "ralph",
		Short: "Run an AI coding agent on a project in a loop, and stop when the work is done",
		Long: `ralph runs an AI coding agent (Claude Code first) on a software project in a loop,
one fresh agent call per iteration, and after every call decides whether to go
on, wait, or stop — and says why.

Exit codes: 0 done, 1 usage or start-up error, 2 circuit breaker open,
3 permission denied, 4 usage limit, 5 budget reached, 6 needs clarification,
7 integrity failure, 130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError{err}
	})
	// Bare `ralph` with run's flags runs the loop, as the bash tool did.
	rf := addRunFlags(root.Flags())
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, _ []string) error { return runRun(cmd.Context(), ios, rf) }
	root.AddCommand(
		newRunCmd(ios),
		newSetupCmd(ios),
		newEnableCmd(ios),
		newImportCmd(ios),
		newMigrateCmd(ios),
		newDoctorCmd(ios),
		newStatusCmd(ios),
		newLogsCmd(ios, nil),
		newStatsCmd(ios, nil),
		newCircuitCmd(ios),
		newSessionCmd(ios),
		newPauseCmd(ios),
		newResumeCmd(ios),
		newStopCmd(ios),
		newMonitorCmd(ios),
		newAnalyzeCmd(ios, nil),
		newVersionCmd(ios),
		newDemoCmd(ios, nil), newDemoAgentCmd(ios),
		newServeCmd(ios),
		newTaskCmd(ios),
	)
	return root
}

// interruptContext is cancelled by the first SIGINT or SIGTERM, so the loop
// can stop the agent and leave consistent state; a second one exits at once.
func interruptContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		select {
		case <-ch:
			fmt.Fprintln(stderr, "ralph: interrupted again, exiting now")
			os.Exit(130)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

// ExitError carries a specific exit code out of a command.
type ExitError struct {
	Code int
	Err  error // may be nil: the command already reported what happened
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// exitCode is the one place where errors become exit codes.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(stderr, "ralph:", ee.Err)
		}
		return ee.Code
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, "ralph:", err)
		fmt.Fprintln(stderr, "Run 'ralph --help' for usage.")
		return 1
	}
	fmt.Fprintln(stderr, "ralph:", err)
	return 1
}
