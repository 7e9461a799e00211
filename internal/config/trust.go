package config

import "slices"

// Repository-chosen programs. A cloned repository's .ralphrc can name the
// program ralph runs (AGENT_CMD, CODEX_CMD…), its arguments (CLAUDE_ARGS…)
// or how far the agent may reach (CODEX_SANDBOX=danger-full-access): these
// are the keys with a warn-on-custom policy. A custom value of one of them
// runs nothing until the user has trusted that .ralphrc (package trust);
// the same value from the environment or a flag is the user's own.

// NeedsTrust lists the settings of c that a .ralphrc chose and that run
// code: every key with a custom (non-stock) value taken from a .ralphrc.
// Values are masked like Redacted's. An empty result needs no trust.
func NeedsTrust(c Config) []Setting {
	var out []Setting
	for i := range keyTable {
		k := &keyTable[i]
		src := c.Sources[k.Name]
		if k.policy != rcWarnCustom || src.Kind != SourceRC {
			continue
		}
		v := k.format(&c)
		if k.Name == "AGENT_CMD" && c.ClaudeCmd != "" {
			v = c.ClaudeCmd // CLAUDE_CODE_CMD kept for Claude as a fallback
		}
		if slices.Contains(k.stock, v) {
			continue
		}
		out = append(out, Setting{Key: k.Name, Value: scrub(v), Source: src})
	}
	return out
}
