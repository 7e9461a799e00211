package scaffold

import (
	"slices"
	"strings"

	"ralph/internal/agent/claude"
	"ralph/internal/shellwords"
)

// MissingTools lists Claude Code permission patterns for the stacks' build,
// test and lint commands that ralph's default allow-list does not cover
// (pnpm run, uv run, bundle exec, dotnet…). Without them the agent's first
// test run is refused and the loop stops on permission denials. Each
// pattern allows exactly the command AGENT.md names, with any arguments.
// Install and run commands are left out: the loop does not need them, and
// the user can add them deliberately.
func MissingTools(stacks []Stack) []string {
	allowed := claude.DefaultAllowedTools()
	var out []string
	for _, s := range stacks {
		for _, cmd := range []string{s.Commands.Build, s.Commands.Test, s.Commands.Lint} {
			if cmd == "" || slices.ContainsFunc(allowed, func(p string) bool { return covers(p, cmd) }) {
				continue
			}
			pattern := "Bash(" + cmd + " *)"
			allowed = append(allowed, pattern)
			out = append(out, pattern)
		}
	}
	return out
}

// AllowedTools is the ALLOWED_TOOLS value enable writes when the stacks need
// more than the default list: the default plus MissingTools. nil means the
// default is enough, and .ralphrc leaves the key empty so the project keeps
// following ralph's default list.
func AllowedTools(stacks []Stack) []string {
	missing := MissingTools(stacks)
	if len(missing) == 0 {
		return nil
	}
	return append(claude.DefaultAllowedTools(), missing...)
}

// covers reports whether the Claude Code pattern allows the shell command:
// "Bash" allows everything, "Bash(p *)" and "Bash(p:*)" allow p with any
// arguments, "Bash(p)" allows exactly p.
func covers(pattern, cmd string) bool {
	if pattern == "Bash" {
		return true
	}
	inner, ok := strings.CutPrefix(pattern, "Bash(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return false
	}
	inner = strings.TrimSuffix(inner, ")")
	prefix, wild := strings.CutSuffix(inner, " *")
	if !wild {
		prefix, wild = strings.CutSuffix(inner, ":*")
	}
	if !wild {
		return cmd == inner
	}
	return cmd == prefix || strings.HasPrefix(cmd, prefix+" ")
}

// VerifyCommand is the verify gate's command for the detected stacks: each
// stack's test command, run in its directory, all of them to pass ("" when
// none has one). It is written into a new .ralphrc where people see it.
func VerifyCommand(stacks []Stack) string {
	var parts []string
	for _, s := range stacks {
		if s.Commands.Test == "" {
			continue
		}
		cmd := s.Commands.Test
		if s.Dir != "" && s.Dir != "." {
			cmd = "(cd " + shellwords.Join([]string{s.Dir}) + " && " + cmd + ")"
		}
		if !slices.Contains(parts, cmd) {
			parts = append(parts, cmd)
		}
	}
	return strings.Join(parts, " && ")
}
