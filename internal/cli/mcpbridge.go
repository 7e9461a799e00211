package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"ralph/internal/agent"
	"ralph/internal/gate"
)

type mcpBridgeOptions struct {
	IO IO
}

// newMCPBridgeCmd builds `ralph mcp-bridge`, the stdio MCP server an agent
// call's CLI starts to reach ralph's gate (package gate). Hidden: nobody
// runs it by hand.
func newMCPBridgeCmd(ios IO, runF func(context.Context, *mcpBridgeOptions) error) *cobra.Command {
	opts := &mcpBridgeOptions{IO: ios}
	return &cobra.Command{
		Use:    "mcp-bridge",
		Short:  "Connect an agent call's MCP client to the ralph that started the call",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runMCPBridge)(cmd.Context(), opts)
		},
	}
}

func runMCPBridge(_ context.Context, opts *mcpBridgeOptions) error {
	return gate.Bridge(os.Getenv(agent.CallDirEnv), os.Getenv(gate.SecretEnv), opts.IO.In, opts.IO.Out)
}
