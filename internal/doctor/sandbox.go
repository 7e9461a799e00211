package doctor

import (
	"context"
	"fmt"

	"ralph/internal/config"
	"ralph/internal/sandbox"
)

// NameSandbox is the check of SANDBOX_PROVIDER.
const NameSandbox = "sandbox"

// openSandbox opens the sandbox the configuration asks for and says which
// one the agent runs in. A sandbox that was asked for and cannot be used
// fails: ralph refuses to start rather than run the agent unconfined. None
// is fine, but named, so nobody assumes one.
func openSandbox(ctx context.Context, cfg config.Config) (*sandbox.Sandbox, Check) {
	sb, err := sandbox.Open(ctx, sandbox.Spec{Provider: cfg.Sandbox.Provider, Network: cfg.Sandbox.Network, Agent: cfg.AgentProvider})
	if err != nil {
		return nil, Check{Name: NameSandbox, Status: Fail, Detail: err.Error()}
	}
	return sb, Check{Name: NameSandbox, Status: OK, Detail: sb.Describe()}
}

func checkSandbox(ctx context.Context, cfg config.Config) Check {
	_, c := openSandbox(ctx, cfg)
	return c
}

// confined runs the agent's program (its --version, `claude auth status`)
// the way the loop runs it: through the sandbox's wrapper, so a program a
// repository chose gets no more from doctor than from `ralph run`. The
// agent provider confines only the agent's own commands, so there it runs
// as the loop starts it.
func confined(env Env, sb *sandbox.Sandbox, dir string) Env {
	wrap := sb.Wrapper()
	if wrap == nil {
		return env
	}
	run := env.Run
	env.Run = func(ctx context.Context, argv []string) (string, error) {
		// No TMPDIR of doctor's to bind: the sandbox's private /tmp will do.
		w, err := wrap(argv, dir, []string{"TMPDIR="})
		if err != nil {
			return "", fmt.Errorf("sandbox: %w", err)
		}
		return run(ctx, w)
	}
	return env
}
