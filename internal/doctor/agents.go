package doctor

import (
	"context"
	"fmt"
	"strings"

	"ralph/internal/config"
	"ralph/internal/shellwords"
)

// installHints say how to get each agent's CLI.
var installHints = map[string]string{
	"claude":   "install Claude Code (npm install -g @anthropic-ai/claude-code)",
	"codex":    "install Codex (npm install -g @openai/codex)",
	"gemini":   "install the Gemini CLI (npm install -g @google/gemini-cli)",
	"opencode": "install OpenCode (npm install -g opencode-ai)",
	"command":  "set AGENT_CMD to the executable",
}

// checkAgent finds the agent executable as `ralph run` would: the configured
// command split into words, its first word looked up on PATH. It returns the
// argv to run for the version when the executable was found.
func checkAgent(cfg config.Config, env Env) (Check, []string) {
	c := Check{Name: NameAgent, Status: Fail}
	argv, err := cfg.AgentArgv()
	if err != nil {
		c.Detail = fmt.Sprintf("AGENT_CMD cannot be used: %v", err)
		return c, nil
	}
	if len(argv) == 0 {
		c.Detail = fmt.Sprintf("no command for agent %q: %s", cfg.AgentProvider, installHints["command"])
		return c, nil
	}
	path, err := env.LookPath(argv[0])
	if err != nil {
		keys := "AGENT_CMD"
		if cfg.AgentProvider == "claude" {
			keys = "AGENT_CMD / CLAUDE_CODE_CMD" // the bash tool's name is the one in old .ralphrc files
		}
		c.Detail = fmt.Sprintf("%s not found (%s, or --agent-cmd; agent %s): %s or point AGENT_CMD at it",
			argv[0], keys, cfg.AgentProvider, installHints[cfg.AgentProvider])
		return c, nil
	}
	c.Status, c.Detail = OK, fmt.Sprintf("%s: %s (%s)", cfg.AgentProvider, strings.Join(argv, " "), path)
	if path == argv[0] {
		c.Detail = cfg.AgentProvider + ": " + path
	}
	return c, argv
}

// checkFallbacks looks up every fallback agent's executable. A missing one
// only warns: the main agent runs, and the fallback is needed only if its
// usage limit hits.
func checkFallbacks(cfg config.Config, env Env) (Check, bool) {
	names := cfg.Fallbacks()
	if len(names) == 0 {
		return Check{}, false
	}
	c := Check{Name: NameFallbacks, Status: OK}
	var parts, missing []string
	for _, n := range names {
		argv, err := shellwords.Split(cfg.AgentCommand(n))
		if err != nil || len(argv) == 0 {
			missing = append(missing, fmt.Sprintf("%s (bad command: %v)", n, err))
			continue
		}
		if _, err := env.LookPath(argv[0]); err != nil {
			missing = append(missing, fmt.Sprintf("%s (%s not found: %s)", n, argv[0], installHints[n]))
			continue
		}
		parts = append(parts, n)
	}
	if len(missing) > 0 {
		c.Status = Warn
		c.Detail = "not usable: " + strings.Join(missing, "; ")
		if len(parts) > 0 {
			c.Detail += "; ready: " + strings.Join(parts, ", ")
		}
		return c, true
	}
	c.Detail = "in order: " + strings.Join(parts, ", ")
	return c, true
}

// otherCredentials names what the other agents authenticate with. Each CLI
// also keeps logins of its own that doctor cannot judge, so finding nothing
// is a warning.
func otherCredentials(cfg config.Config, env Env) Check {
	var vars []string
	var login string
	switch cfg.AgentProvider {
	case "codex":
		vars, login = []string{"OPENAI_API_KEY", "CODEX_API_KEY"}, "a login in $CODEX_HOME/auth.json (`codex login`)"
	case "gemini":
		vars, login = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"}, "a Google login in ~/.gemini (`gemini` once, interactively)"
	case "opencode":
		return Check{Name: NameCredentials, Status: OK, Detail: "OpenCode keeps its own provider logins (`opencode auth login`); doctor does not read them"}
	default:
		return Check{Name: NameCredentials, Status: OK, Detail: "a plain command: ralph passes no credentials"}
	}
	var found []string
	for _, k := range vars {
		if v, ok := env.LookupEnv(k); ok && v != "" {
			found = append(found, k+" (environment)")
		} else if s, ok := cfg.Secrets[k]; ok && s.Reveal() != "" {
			found = append(found, k+" (.ralphrc)")
		}
	}
	if len(found) > 0 {
		return Check{Name: NameCredentials, Status: OK, Detail: strings.Join(found, "; ")}
	}
	return Check{Name: NameCredentials, Status: Warn, Detail: fmt.Sprintf("none found for %s: set %s, or rely on %s",
		cfg.AgentProvider, strings.Join(vars, " or "), login)}
}

// checkInstalledAgents lists the agent CLIs found, with their versions: the
// ones a --agent or --fallback-agent could use today. It only informs.
func checkInstalledAgents(ctx context.Context, env Env) Check {
	c := Check{Name: NameAgents, Status: OK}
	if env.Agents == nil {
		c.Detail = "not checked"
		return c
	}
	var found, missing []string
	for _, f := range env.Agents(ctx) {
		switch {
		case f.Err == nil:
			found = append(found, f.Name+" "+f.Version)
		case f.Path != "":
			found = append(found, f.Name+" (version unknown)")
		default:
			missing = append(missing, f.Name)
		}
	}
	c.Detail = "found: " + orNone(found)
	if len(missing) > 0 {
		c.Detail += "; not found: " + strings.Join(missing, ", ")
	}
	return c
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
