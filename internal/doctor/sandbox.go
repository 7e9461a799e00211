package doctor

import (
	"context"

	"ralph/internal/config"
	"ralph/internal/sandbox"
)

// NameSandbox is the check of SANDBOX_PROVIDER.
const NameSandbox = "sandbox"

// checkSandbox says which sandbox the agent runs in. A sandbox that was
// asked for and cannot be used fails: ralph refuses to start rather than
// run the agent unconfined. None is fine, but named, so nobody assumes one.
func checkSandbox(ctx context.Context, cfg config.Config) Check {
	sb, err := sandbox.Open(ctx, sandbox.Spec{Provider: cfg.Sandbox.Provider, Network: cfg.Sandbox.Network, Agent: cfg.AgentProvider})
	if err != nil {
		return Check{Name: NameSandbox, Status: Fail, Detail: err.Error()}
	}
	return Check{Name: NameSandbox, Status: OK, Detail: sb.Describe()}
}
