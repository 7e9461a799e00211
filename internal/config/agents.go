package config

import (
	"fmt"
	"slices"
	"strings"
)

// AgentCommand is the command line that runs agent name: AGENT_CMD for the
// main agent, the agent's own *_CMD key for a fallback.
func (c Config) AgentCommand(name string) string {
	if name == c.AgentProvider {
		return c.AgentCmd
	}
	switch name {
	case "claude":
		if c.ClaudeCmd != "" {
			return c.ClaudeCmd
		}
		return "claude"
	case "codex":
		return c.CodexCmd
	case "gemini":
		return c.GeminiCmd
	case "opencode":
		return c.OpencodeCmd
	}
	return ""
}

// AgentModel is the model for agent name. CLAUDE_MODEL is Claude's, as in
// the bash tool, but --model means the main agent whichever it is: a flag is
// said for this run's agent, a .ralphrc line for the agent it names.
func (c Config) AgentModel(name string) string {
	if name == c.AgentProvider && c.Sources["CLAUDE_MODEL"].Kind == SourceFlag {
		return c.Model
	}
	switch name {
	case "claude":
		return c.Model
	case "codex":
		return c.CodexModel
	case "gemini":
		return c.GeminiModel
	case "opencode":
		return c.OpencodeModel
	}
	return ""
}

// AgentExtraArgs are the user's extra arguments for agent name.
func (c Config) AgentExtraArgs(name string) ([]string, error) {
	key, v := "", ""
	switch name {
	case "claude":
		key, v = "CLAUDE_ARGS", c.ClaudeArgs
	case "codex":
		key, v = "CODEX_ARGS", c.CodexArgs
	case "gemini":
		key, v = "GEMINI_ARGS", c.GeminiArgs
	case "opencode":
		key, v = "OPENCODE_ARGS", c.OpencodeArgs
	default:
		return nil, nil
	}
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	args, err := SplitWords(v)
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", key, c.Sources[key], err)
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
