package sandbox

import (
	"fmt"
	"slices"
)

// Agent is the provider for machines without bubblewrap (macOS): the agent
// CLI's own sandbox, switched on by ralph's command line. Codex confines
// its commands with `--sandbox workspace-write`; Claude Code with its
// sandbox settings, passed with --settings so the user's own files are
// left alone. What they confine is the agent's commands (its shell tool),
// not the agent process: the CLI itself and its file tools read what your
// user can read, and a repository's files are seen by the model as ever.
// bwrap confines the whole process tree and hides the home directory.
const Agent = "agent"

// OwnSandboxes lists the agents that have a sandbox of their own.
func OwnSandboxes() []string { return []string{"claude", "codex"} }

// ClaudeSandboxSettings are the settings Claude Code gets under the agent
// provider (its `--settings` JSON): every Bash command in its sandbox,
// none let out of it (allowUnsandboxedCommands), and a start-up error
// instead of unconfined commands where the sandbox cannot run
// (failIfUnavailable). autoAllowBashIfSandboxed lets a sandboxed command
// run without the prompt nobody is there to answer.
const ClaudeSandboxSettings = `{"sandbox":{"enabled":true,"failIfUnavailable":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false}}`

// openAgent checks that the agent has a sandbox of its own. Its network
// cannot be cut: the CLI itself must reach its API, and its sandbox keeps
// its commands' network to what its own settings allow.
func openAgent(spec Spec) (*Sandbox, error) {
	if spec.Network == NetworkNone {
		return nil, fmt.Errorf("SANDBOX_PROVIDER=agent: SANDBOX_NETWORK=none needs bwrap (Linux); " +
			"an agent's own sandbox cannot cut the agent off the network")
	}
	if !slices.Contains(OwnSandboxes(), spec.Agent) {
		return nil, fmt.Errorf("SANDBOX_PROVIDER=agent: %s has no sandbox of its own; it works with claude "+
			"(Claude Code's sandbox settings) and codex (--sandbox workspace-write); for %s use SANDBOX_PROVIDER=bwrap (Linux)",
			orUnnamed(spec.Agent), orUnnamed(spec.Agent))
	}
	return &Sandbox{Spec: spec}, nil
}

func orUnnamed(agent string) string {
	if agent == "" {
		return "this agent"
	}
	return agent
}

// Own reports whether the agent confines itself (the agent provider):
// its adapter then adds the flags that switch its sandbox on.
func (s *Sandbox) Own() bool { return s != nil && s.Provider == Agent }

// Wrapper is the argv wrapper the runner applies to each agent call: Wrap
// for bwrap, nil when the agent confines itself or runs unconfined.
func (s *Sandbox) Wrapper() func(argv []string, dir string, env []string, share ...string) ([]string, error) {
	if s == nil || s.Own() {
		return nil
	}
	return s.Wrap
}

// describeAgent is Describe for the agent provider.
func (s *Sandbox) describeAgent() string {
	switch s.Agent {
	case "codex":
		return "agent (Codex --sandbox, CODEX_SANDBOX): its commands write only the project and temp (read-only: nothing), " +
			"no network for them; the agent itself reads what your user can read"
	default:
		return "agent (Claude Code sandbox settings): its Bash commands write only the project, network by its own rules; " +
			"the agent and its file tools read what your user can read"
	}
}
