package config

import (
	"bytes"
	"fmt"
	"strings"

	"ralph/internal/shellwords"
)

// ParseRalphrc reads a .ralphrc as data. It never runs it: nothing is
// sourced, no command substitution happens. name is used in every message
// (".ralphrc:12: unterminated quote"). References such as ${HOME} see only
// variables assigned on earlier lines; use ParseRalphrcEnv to let them see
// the environment too.
//
// Problems with a line are warnings and the line is skipped; parsing goes on.
// The only error is a file that is not text (a NUL byte). The returned map is
// keyed by canonical key; secret-looking variables are kept under their own
// names with Entry.Secret set. Values are not validated here: Resolve does
// that, so a bad value is reported with the layer that supplied it.
func ParseRalphrc(name string, data []byte) (map[string]Entry, []Warning, error) {
	return ParseRalphrcEnv(name, data, nil)
}

// ParseRalphrcEnv is ParseRalphrc with $VAR, ${VAR} and ${VAR:-default}
// references resolved from lookup (typically os.LookupEnv) when no earlier
// line assigned the variable. lookup may be nil.
func ParseRalphrcEnv(name string, data []byte, lookup func(string) (string, bool)) (map[string]Entry, []Warning, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM some Windows editors write
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		return nil, nil, fmt.Errorf("%s:%d: NUL byte: this is not a text file", name, line)
	}
	p := &rcParser{file: name, lookup: lookup, vars: map[string]string{}, values: map[string]Entry{}}
	for i, line := range strings.Split(string(data), "\n") {
		p.n = i + 1
		p.parseLine(strings.TrimSuffix(line, "\r"))
	}
	return p.values, p.warns, nil
}

// rcParser holds the state of one ParseRalphrcEnv call.
type rcParser struct {
	file   string
	n      int // current line
	key    string
	lookup func(string) (string, bool)
	vars   map[string]string // every variable assigned so far, as bash would see it
	values map[string]Entry
	warns  []Warning
}

func (p *rcParser) warn(format string, args ...any) {
	p.warns = append(p.warns, Warning{
		Source: Source{Kind: SourceRC, File: p.file, Line: p.n, Name: p.key},
		Key:    p.key,
		Msg:    fmt.Sprintf(format, args...),
	})
}

// skip is warn for a line that could not be read: its setting is lost.
func (p *rcParser) skip(format string, args ...any) {
	p.warn(format, args...)
	p.warns[len(p.warns)-1].Skipped = true
}

func (p *rcParser) parseLine(line string) {
	p.key = ""
	s := strings.TrimLeft(line, " \t")
	if s == "" || s[0] == '#' || strings.TrimRight(s, " \t") == "export" {
		return
	}
	exported := false
	if rest, ok := strings.CutPrefix(s, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
		s, exported = strings.TrimLeft(rest, " \t"), true
	}
	i := 0
	for i < len(s) && shellwords.IsNameByte(s[i], i == 0) {
		i++
	}
	if i == 0 || i == len(s) || s[i] != '=' {
		p.notAssignment(s, exported)
		return
	}
	p.key = s[:i]
	if after := strings.TrimLeft(s[i+1:], " \t"); after != s[i+1:] && after != "" && after[0] != '#' {
		// `KEY= value` would run "value" in bash with KEY empty.
		p.skip("%s: spaces around '=' are not allowed (line ignored); write %s=value", p.key, p.key)
		return
	}
	value, ok := p.lexValue(s[i+1:])
	if !ok {
		return
	}
	if strings.ContainsFunc(value, isControl) {
		// Values end up in terminal output and agent arguments; escape
		// sequences from a repository file have no business there.
		p.skip("%s: value contains control characters (line ignored)", p.key)
		return
	}
	p.vars[p.key] = value
	p.record(value)
}

// notAssignment explains a line that is not KEY=value as precisely as it can.
func (p *rcParser) notAssignment(s string, exported bool) {
	eq := strings.IndexByte(s, '=')
	if eq < 0 {
		if exported && shellwords.IsName(strings.TrimSpace(s)) {
			return // "export NAME" only marks a variable for export: nothing to read
		}
		p.skip("not a setting: want NAME=value (ignored; .ralphrc is read as data, never run)")
		return
	}
	left := s[:eq]
	switch trimmed := strings.TrimRight(left, " \t"); {
	case left == "":
		p.skip("missing key before '=' (line ignored)")
	case trimmed != left && shellwords.IsName(trimmed):
		p.key = trimmed
		p.skip("%s: spaces around '=' are not allowed (line ignored); write %s=value", trimmed, trimmed)
	case strings.ContainsAny(left, " \t"):
		p.skip("not a setting: want NAME=value (ignored; .ralphrc is read as data, never run)")
	default:
		p.skip("invalid key %q (line ignored): use letters, digits and _", clip(left))
	}
}

// record files a parsed assignment: a known key (under its canonical name),
// a secret kept for the agent, or an unknown key that is ignored.
func (p *rcParser) record(value string) {
	src := Source{Kind: SourceRC, File: p.file, Line: p.n, Name: p.key}
	if k := findKey(p.key); k != nil {
		if prev, ok := p.values[k.Name]; ok {
			p.warn("%s overrides %s from line %d", p.key, prev.Source.Name, prev.Source.Line)
		}
		p.values[k.Name] = Entry{Key: k.Name, Value: value, Source: src}
		return
	}
	if isSecretName(p.key) {
		p.values[p.key] = Entry{Key: p.key, Value: value, Source: src, Secret: true}
		p.warn("%s looks like a secret: ralph hides it and passes it to the agent, "+
			"but a file in the repository is a risky place for it; prefer the environment", p.key)
		return
	}
	if s := suggest(p.key); s != "" {
		p.warn("unknown key %s (ignored); did you mean %s?", p.key, s)
		return
	}
	p.warn("unknown key %s (ignored)", p.key)
}

// lexValue reads the value after '=' with bash's quoting rules: single
// quotes are literal, double quotes allow \$ \` \" \\ and references, an
// unquoted backslash escapes the next character, unquoted whitespace or ';'
// ends the value and '#' after whitespace starts a comment. Whatever follows
// the value must be a comment: `KEY=a b` would run b in bash, so the line is
// refused rather than guessed at.
func (p *rcParser) lexValue(s string) (string, bool) {
	var b strings.Builder
	i := 0
	if s == "~" || strings.HasPrefix(s, "~/") {
		if home, ok := p.get("HOME"); ok {
			b.WriteString(home)
			i = 1
		}
	}
scan:
	for i < len(s) {
		switch c := s[i]; c {
		case ' ', '\t', ';':
			break scan
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				p.skip("%s: unterminated quote (line ignored)", p.key)
				return "", false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case '"':
			var ok bool
			if i, ok = p.lexDouble(s, i+1, &b); !ok {
				p.skip("%s: unterminated quote (line ignored)", p.key)
				return "", false
			}
		case '\\':
			if i+1 == len(s) {
				p.skip("%s: a trailing backslash would continue the line; continuation lines are not supported (line ignored)", p.key)
				return "", false
			}
			b.WriteByte(s[i+1])
			i += 2
		case '$':
			i = p.lexDollar(s, i, &b)
		case '`':
			i = p.lexBacktick(s, i, &b)
		default:
			b.WriteByte(c)
			i++
		}
	}
	tail := strings.TrimLeft(s[i:], " \t")
	if rest, ok := strings.CutPrefix(tail, ";"); ok {
		tail = strings.TrimLeft(rest, " \t")
	}
	if tail != "" && tail[0] != '#' {
		p.skip("%s: unexpected %q after the value (line ignored); quote values that contain spaces", p.key, clip(tail))
		return "", false
	}
	return b.String(), true
}

// lexDouble reads a double-quoted string from s[i:], just after the opening
// quote. It returns the index after the closing quote, or false if none.
func (p *rcParser) lexDouble(s string, i int, b *strings.Builder) (int, bool) {
	for i < len(s) {
		switch c := s[i]; c {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
			b.WriteByte(c) // bash keeps other backslashes: "\n" is two characters
			i++
		case '$':
			i = p.lexDollar(s, i, b)
		case '`':
			i = p.lexBacktick(s, i, b)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return i, false
}

// lexDollar handles '$' at s[i]: a variable reference is expanded, a command
// substitution is kept as text with a warning, anything else is a literal '$'.
func (p *rcParser) lexDollar(s string, i int, b *strings.Builder) int {
	if i+1 >= len(s) {
		b.WriteByte('$')
		return i + 1
	}
	switch c := s[i+1]; {
	case c == '(':
		end, _ := closing(s, i+1, '(', ')')
		p.substitution(s[i:end])
		b.WriteString(s[i:end])
		return end
	case c == '{':
		end, ok := closing(s, i+1, '{', '}')
		if !ok {
			p.warn("%s: unterminated ${ (kept as written)", p.key)
			b.WriteString(s[i:end])
			return end
		}
		b.WriteString(p.braced(s[i+2:end-1], s[i:end]))
		return end
	case shellwords.IsNameByte(c, true):
		j := i + 1
		for j < len(s) && shellwords.IsNameByte(s[j], false) {
			j++
		}
		b.WriteString(p.ref(s[i+1 : j]))
		return j
	}
	b.WriteByte('$') // $1, $$, "$" alone: nothing ralph expands
	return i + 1
}

// lexBacktick keeps an old-style `command` as text, with a warning.
func (p *rcParser) lexBacktick(s string, i int, b *strings.Builder) int {
	end := len(s)
	for j := i + 1; j < len(s); j++ {
		if s[j] == '\\' {
			j++
		} else if s[j] == '`' {
			end = j + 1
			break
		}
	}
	end = min(end, len(s))
	p.substitution(s[i:end])
	b.WriteString(s[i:end])
	return end
}

func (p *rcParser) substitution(text string) {
	p.warn("%s: command substitution %q is not run (.ralphrc is never executed); value kept as written", p.key, clip(text))
}

// braced expands the inside of ${...}: NAME, NAME:-word and NAME-word. Other
// forms are kept as written, with a warning.
func (p *rcParser) braced(inner, literal string) string {
	n := 0
	for n < len(inner) && shellwords.IsNameByte(inner[n], n == 0) {
		n++
	}
	name, op := inner[:n], inner[n:]
	switch {
	case name == "":
	case op == "":
		return p.ref(name)
	case strings.HasPrefix(op, ":-"):
		if v, ok := p.get(name); ok && v != "" {
			return v
		}
		return p.word(op[2:])
	case strings.HasPrefix(op, "-"):
		if v, ok := p.get(name); ok {
			return v
		}
		return p.word(op[1:])
	}
	p.warn("%s: unsupported expansion %q kept as written", p.key, clip(literal))
	return literal
}

// word expands references inside the default of ${NAME:-default}.
func (p *rcParser) word(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '$' {
			i = p.lexDollar(s, i, &b)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// ref expands $NAME. An unset variable expands to nothing, as in bash, but
// says so: a silently empty value is a hard bug to find.
func (p *rcParser) ref(name string) string {
	if v, ok := p.get(name); ok {
		return v
	}
	p.warn("%s: $%s is not set; it expands to an empty string", p.key, name)
	return ""
}

// get looks a variable up as bash would: earlier lines first, then the
// environment.
func (p *rcParser) get(name string) (string, bool) {
	if v, ok := p.vars[name]; ok {
		return v, true
	}
	if p.lookup != nil {
		return p.lookup(name)
	}
	return "", false
}

// closing returns the index just past the bracket that closes s[open],
// skipping escapes (and, inside $(...), single-quoted text), or len(s) and
// false if it never closes.
func closing(s string, open int, lb, rb byte) (int, bool) {
	depth := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\'':
			if k := strings.IndexByte(s[j+1:], '\''); k >= 0 && lb == '(' {
				j += k + 1
			}
		case lb:
			depth++
		case rb:
			if depth--; depth == 0 {
				return j + 1, true
			}
		}
	}
	return len(s), false
}

func isControl(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }

// clip shortens text quoted in a message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
