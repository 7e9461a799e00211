package cli

import (
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

func newStatusCmd(ios IO) *cobra.Command {
	var p projectFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the loop's status: loop number, state, breaker, waits, totals",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, _, err := p.open(ios)
			if err != nil {
				return err
			}
			return printStatus(ios, st, p.json)
		},
	}
	p.add(cmd, true)
	return cmd
}

func newCircuitCmd(ios IO) *cobra.Command {
	cmd := &cobra.Command{Use: "circuit", Short: "Show or reset the circuit breaker"}
	var ps, pr projectFlags
	status := &cobra.Command{
		Use: "status", Short: "Show the circuit breaker's state and counters", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, cfg, err := ps.open(ios)
			if err != nil {
				return err
			}
			return circuitStatus(ios, st, cfg, ps.json)
		},
	}
	ps.add(status, true)
	reset := &cobra.Command{
		Use: "reset", Short: "Close the circuit breaker by hand", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, _, err := pr.open(ios)
			if err != nil {
				return err
			}
			return circuitReset(ios, st, "reset by hand (ralph circuit reset)")
		},
	}
	pr.add(reset, false)
	cmd.AddCommand(status, reset)
	return cmd
}

func newSessionCmd(ios IO) *cobra.Command {
	cmd := &cobra.Command{Use: "session", Short: "Manage the agent session ralph resumes"}
	var p projectFlags
	reset := &cobra.Command{
		Use: "reset", Short: "Forget the agent session: the next call starts a new one", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, _, err := p.open(ios)
			if err != nil {
				return err
			}
			return sessionReset(ios, st, "manual")
		},
	}
	p.add(reset, false)
	cmd.AddCommand(reset)
	return cmd
}
