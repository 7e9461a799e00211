package config

import (
	"fmt"
	"slices"
	"strings"

	"ralph/internal/shellwords"
)

// agentKeys are one agent's own settings: its command when it is not the
// main agent, its model and its extra arguments (with the key that names
// them in messages).
type agentKeys struct {
	cmd, model, args *string
	argsKey          string
}

// keysOf returns agent name's settings; ok is false for "command", which
// has none of its own.
func (c *Config) keysOf(name string) (agentKeys, bool) {
	switch name {
	case "claude":
		return agentKeys{&c.ClaudeCmd, &c.Model, &c.ClaudeArgs, "CLAUDE_ARGS"}, true
	case "codex":
		return agentKeys{&c.CodexCmd, &c.CodexModel, &c.CodexArgs, "CODEX_ARGS"}, true
	case "gemini":
		return agentKeys{&c.GeminiCmd, &c.GeminiModel, &c.GeminiArgs, "GEMINI_ARGS"}, true
	case "opencode":
		return agentKeys{&c.OpencodeCmd, &c.OpencodeModel, &c.OpencodeArgs, "OPENCODE_ARGS"}, true
	}
	return agentKeys{}, false
}

// AgentCommand is the command line that runs agent name: AGENT_CMD for the
// main agent, the agent's own *_CMD key for a fallback.
func (c Config) AgentCommand(name string) string {
	if name == c.AgentProvider {
		return c.AgentCmd
	}
	k, ok := c.keysOf(name)
	if !ok {
		return ""
	}
	if *k.cmd == "" && name == "claude" {
		return "claude" // ClaudeCmd is set only from CLAUDE_CODE_CMD
	}
	return *k.cmd
}

// AgentModel is the model for agent name. CLAUDE_MODEL is Claude's, as in
// the bash tool, but --model means the main agent whichever it is: a flag is
// said for this run's agent, a .ralphrc line for the agent it names.
func (c Config) AgentModel(name string) string {
	if name == c.AgentProvider && c.Sources["CLAUDE_MODEL"].Kind == SourceFlag {
		return c.Model
	}
	if k, ok := c.keysOf(name); ok {
		return *k.model
	}
	return ""
}

// AgentExtraArgs are the user's extra arguments for agent name.
func (c Config) AgentExtraArgs(name string) ([]string, error) {
	k, ok := c.keysOf(name)
	if !ok || strings.TrimSpace(*k.args) == "" {
		return nil, nil
	}
	args, err := shellwords.Split(*k.args)
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", k.argsKey, c.Sources[k.argsKey], err)
	}
	return args, nil
}

// Fallbacks are the fallback agents in order, without the main agent and
// without repeats (naming one twice cannot make it any less limited).
func (c Config) Fallbacks() []string {
	var out []string
	for _, n := range c.FallbackAgents {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" || n == c.AgentProvider || slices.Contains(out, n) {
			continue
		}
		out = append(out, n)
	}
	return out
}
