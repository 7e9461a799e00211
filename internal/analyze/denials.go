package analyze

import (
	"fmt"
	"strings"
)

// SplitToolList splits an allowed-tools setting ("Write,Read,Bash(git diff *)"
// or space separated) into entries; separators inside parentheses do not split.
func SplitToolList(s string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if t := strings.TrimSpace(s[start:end]); t != "" {
			out = append(out, t)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',', ' ', '\t', '\n':
			if depth == 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	flush(len(s))
	return out
}

// toolRule is one allowed-tools entry: a tool and an optional pattern.
type toolRule struct {
	entry, tool, pattern string
}

func parseRules(list []string) []toolRule {
	var rules []toolRule
	for _, e := range list {
		e = strings.TrimSpace(e)
		r := toolRule{entry: e, tool: e}
		if i := strings.IndexByte(e, '('); i > 0 && strings.HasSuffix(e, ")") {
			r.tool, r.pattern = e[:i], strings.TrimSpace(e[i+1:len(e)-1])
		}
		rules = append(rules, r)
	}
	return rules
}

// covers reports whether a Bash rule allows a command by its pattern:
// "git diff *" and "git diff:*" cover "git diff …" only, "*" or no pattern
// cover every command.
func (r toolRule) covers(command string) bool {
	if !strings.EqualFold(r.tool, "Bash") {
		return false
	}
	p := r.pattern
	if p == "" || p == "*" {
		return true
	}
	star := strings.HasSuffix(p, "*")
	p = strings.TrimSuffix(p, "*")
	p = strings.TrimSuffix(p, ":")
	spaced := strings.HasSuffix(p, " ")
	p = strings.TrimSpace(p)
	switch {
	case command == p:
		return true
	case strings.HasPrefix(command, p+" "):
		return star || spaced
	case star && !spaced:
		return strings.HasPrefix(command, p)
	}
	return false
}

// baseCommand is the first simple command of a shell line, without leading
// variable assignments: what runs before any pipe, redirect or chain.
func baseCommand(cmd string) string {
	cut := len(cmd)
	for _, sep := range []string{"|", ";", "&", ">", "<", "$(", "`", "\n"} {
		if i := strings.Index(cmd, sep); i >= 0 && i < cut {
			cut = i
		}
	}
	// "2>&1" leaves a trailing fd number on the base.
	base := strings.TrimSpace(cmd[:cut])
	if f := strings.Fields(base); len(f) > 1 && isDigits(f[len(f)-1]) && cut < len(cmd) && cmd[cut] == '>' {
		base = strings.Join(f[:len(f)-1], " ")
	}
	fields := strings.Fields(base)
	for len(fields) > 0 && strings.Contains(fields[0], "=") && !strings.HasPrefix(fields[0], "=") {
		fields = fields[1:]
	}
	return strings.Join(fields, " ")
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// filterDenials drops Bash denials whose base command the allow-list already
// covers: Claude refused them for a pipe, redirect or chain, which a broader
// rule would not fix. They come back as warnings.
func filterDenials(denials []Denial, allowed []string) (kept []Denial, warnings []string) {
	kept = []Denial{}
	rules := parseRules(allowed)
	for _, d := range denials {
		if d.Command != "" && strings.EqualFold(d.Tool, "Bash") {
			base := baseCommand(d.Command)
			if r, ok := coveringRule(rules, base); ok && base != "" {
				warnings = append(warnings, fmt.Sprintf(
					"Bash command %q was refused although %s is allowed: Claude asks separately for pipes, redirects and chained commands; not counted as a permission denial",
					d.Command, r.entry))
				continue
			}
		}
		kept = append(kept, d)
	}
	return kept, warnings
}

func coveringRule(rules []toolRule, command string) (toolRule, bool) {
	for _, r := range rules {
		if r.covers(command) {
			return r, true
		}
	}
	return toolRule{}, false
}
