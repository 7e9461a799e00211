package cli

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"ralph/internal/config"
	"ralph/internal/store"
)

// projectFlags are the few flags the state commands share.
type projectFlags struct {
	dir  string
	json bool
}

func (p *projectFlags) add(cmd *cobra.Command, withJSON bool) {
	cmd.Flags().StringVarP(&p.dir, "dir", "C", ".", "project directory")
	if withJSON {
		cmd.Flags().BoolVar(&p.json, "json", false, "print JSON")
	}
}

func (p *projectFlags) open(ios IO) (*store.Store, config.Config, error) {
	dir, err := filepath.Abs(p.dir)
	if err != nil {
		return nil, config.Config{}, err
	}
	cfg, err := loadConfig(dir, config.Layer{}, ios.Err)
	if err != nil {
		return nil, cfg, err
	}
	st, err := openProject(dir, cfg)
	return st, cfg, err
}

type statusOptions struct {
	IO      IO
	Project projectFlags
}

// newStatusCmd builds `ralph status`; runF replaces runStatus in flag tests.
func newStatusCmd(ios IO, runF func(context.Context, *statusOptions) error) *cobra.Command {
	opts := &statusOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the loop's status: loop number, state, breaker, waits, totals",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runStatus)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, true)
	return cmd
}

func runStatus(_ context.Context, opts *statusOptions) error {
	st, _, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	return printStatus(opts.IO, st, opts.Project.json)
}

func newCircuitCmd(ios IO) *cobra.Command {
	cmd := &cobra.Command{Use: "circuit", Short: "Show or reset the circuit breaker"}
	cmd.AddCommand(newCircuitStatusCmd(ios, nil), newCircuitResetCmd(ios, nil))
	return cmd
}

type circuitStatusOptions struct {
	IO      IO
	Project projectFlags
}

// newCircuitStatusCmd builds `ralph circuit status`; runF replaces
// runCircuitStatus in flag tests.
func newCircuitStatusCmd(ios IO, runF func(context.Context, *circuitStatusOptions) error) *cobra.Command {
	opts := &circuitStatusOptions{IO: ios}
	cmd := &cobra.Command{
		Use: "status", Short: "Show the circuit breaker's state and counters", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runCircuitStatus)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, true)
	return cmd
}

func runCircuitStatus(_ context.Context, opts *circuitStatusOptions) error {
	st, cfg, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	return circuitStatus(opts.IO, st, cfg, opts.Project.json)
}

type circuitResetOptions struct {
	IO      IO
	Project projectFlags
}

// newCircuitResetCmd builds `ralph circuit reset`; runF replaces
// runCircuitReset in flag tests.
func newCircuitResetCmd(ios IO, runF func(context.Context, *circuitResetOptions) error) *cobra.Command {
	opts := &circuitResetOptions{IO: ios}
	cmd := &cobra.Command{
		Use: "reset", Short: "Close the circuit breaker by hand", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runCircuitReset)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, false)
	return cmd
}

func runCircuitReset(_ context.Context, opts *circuitResetOptions) error {
	st, _, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	return circuitReset(opts.IO, st, "reset by hand (ralph circuit reset)")
}

func newSessionCmd(ios IO) *cobra.Command {
	cmd := &cobra.Command{Use: "session", Short: "Manage the agent session ralph resumes"}
	cmd.AddCommand(newSessionResetCmd(ios, nil))
	return cmd
}

type sessionResetOptions struct {
	IO      IO
	Project projectFlags
}

// newSessionResetCmd builds `ralph session reset`; runF replaces
// runSessionReset in flag tests.
func newSessionResetCmd(ios IO, runF func(context.Context, *sessionResetOptions) error) *cobra.Command {
	opts := &sessionResetOptions{IO: ios}
	cmd := &cobra.Command{
		Use: "reset", Short: "Forget the agent session: the next call starts a new one", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runSessionReset)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, false)
	return cmd
}

func runSessionReset(_ context.Context, opts *sessionResetOptions) error {
	st, _, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	return sessionReset(opts.IO, st, "manual")
}
