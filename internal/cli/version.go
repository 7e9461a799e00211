package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"ralph/internal/version"
)

func newVersionCmd(ios IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ralph's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(ios.Out, "ralph %s %s/%s %s\n", version.String(), runtime.GOOS, runtime.GOARCH, runtime.Version())
			return err
		},
	}
}
