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
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"ralph/internal/agent"
	"ralph/internal/redact"
	"ralph/internal/suggest"
	"ralph/internal/version"
)

// IO is where a command reads and writes; tests pass buffers.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// Main runs ralph with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Secrets in ralph's environment are masked by value in everything it
	// writes, whatever their shape.
	redact.AddEnviron(os.Environ())
	ctx, stop := interruptContext(stderr)
	defer stop()
	root := NewRoot(IO{In: stdin, Out: stdout, Err: stderr})
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	return exitCode(cmd, err, stderr)
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
7 integrity failure, 8 agent setup failure, 130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.Err)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{withFlagSuggestion(cmd, err)}
	})
	// Bare `ralph` with run's flags runs the loop, as the bash tool did.
	bindRun(root, ios, nil)
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		if hint, ok := otherToolsWords[args[0]]; ok {
			return usageError{fmt.Errorf("ralph has no %q command: %s", args[0], hint)}
		}
		msg := fmt.Sprintf("unknown command %q for \"ralph\"", args[0])
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		if s := suggest.Closest(args[0], names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return usageError{errors.New(msg)}
	}
	root.AddCommand(
		newRunCmd(ios, nil),
		newSetupCmd(ios, nil),
		newEnableCmd(ios, nil),
		newImportCmd(ios, nil),
		newMigrateCmd(ios, nil),
		newDoctorCmd(ios, nil),
		newStatusCmd(ios, nil),
		newLogsCmd(ios, nil),
		newStatsCmd(ios, nil),
		newReplayCmd(ios, nil),
		newCircuitCmd(ios),
		newSessionCmd(ios),
		newPauseCmd(ios, nil),
		newResumeCmd(ios, nil),
		newStopCmd(ios, nil),
		newMonitorCmd(ios, nil),
		newAnalyzeCmd(ios, nil),
		newVersionCmd(ios, nil),
		newTrustCmd(ios, nil),
		newDemoCmd(ios, nil), newDemoAgentCmd(ios, nil),
		newServeCmd(ios, nil),
		newTaskCmd(ios, nil),
		newWorkerCmd(ios, nil),
		newMCPBridgeCmd(ios, nil),
	)
	usageArgs(root)
	// `ralph --version` is what people type first; it prints what
	// `ralph version --short` does.
	root.Version = version.String()
	root.SetVersionTemplate("ralph {{.Version}}\n")
	root.InitDefaultVersionFlag() // now, so --help and flag lookups see it
	return root
}

// otherToolsWords are commands other tools taught people, with where ralph
// does that.
var otherToolsWords = map[string]string{
	"init":  "run `ralph setup NAME` for a new project, or `ralph enable` in an existing repository",
	"start": "run `ralph run` to loop the agent over this project, or `ralph task start` on a daemon",
}

// withFlagSuggestion adds "did you mean --max-loops?" to an unknown-flag
// error when a flag of the command is one typo away.
func withFlagSuggestion(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := suggest.Closest(name, names); s != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, s)
	}
	return err
}

// interruptContext is cancelled by the first SIGINT, SIGTERM or SIGHUP (a
// closed terminal), so the loop stops the agent's process group (SIGTERM,
// then SIGKILL after a grace period), writes its status and exits 130. A
// second signal (GNU timeout sends two) does not exit at once, which would
// leave the agent running, the status "running" and the lock free: it
// kills the agents' groups at once and lets that same clean-up finish. Only
// a third exits without it, after killing the groups too.
func interruptContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 3)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for n := 1; ; n++ {
			select {
			case <-ch:
			case <-done:
				return
			}
			switch n {
			case 1:
				cancel()
			case 2:
				fmt.Fprintln(stderr, "ralph: interrupted again: killing the agent now")
				agent.KillGroups()
			default:
				agent.KillGroups()
				fmt.Fprintln(stderr, "ralph: interrupted a third time, exiting now")
				os.Exit(130)
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}
