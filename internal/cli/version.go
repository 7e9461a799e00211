package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"ralph/internal/version"
)

type versionOptions struct {
	IO    IO
	Short bool
}

// newVersionCmd builds `ralph version`; runF replaces runVersion in flag
// tests.
func newVersionCmd(ios IO, runF func(context.Context, *versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print ralph's version and the agent CLIs found on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runVersion)(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Short, "short", false, "print only ralph's own version (no agent detection)")
	return cmd
}

func runVersion(ctx context.Context, opts *versionOptions) error {
	if _, err := fmt.Fprintf(opts.IO.Out, "ralph %s %s/%s %s\n", version.String(), runtime.GOOS, runtime.GOARCH, runtime.Version()); err != nil {
		return err
	}
	if !opts.Short {
		printAgents(ctx, opts.IO.Out)
	}
	return nil
}
