package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"ralph/internal/version"
)

func newVersionCmd(ios IO) *cobra.Command {
	var short bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print ralph's version and the agent CLIs found on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := fmt.Fprintf(ios.Out, "ralph %s %s/%s %s\n", version.String(), runtime.GOOS, runtime.GOARCH, runtime.Version()); err != nil {
				return err
			}
			if !short {
				printAgents(cmd.Context(), ios.Out)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "print only ralph's own version (no agent detection)")
	return cmd
}
