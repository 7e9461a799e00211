package config

import (
	"errors"
	"fmt"
	"strings"
)

// SplitWords splits a command line into words the way a POSIX shell would,
// without running one: whitespace separates words, single quotes keep text
// literally, double quotes keep text but honour \" \\ \$ \` escapes, and an
// unquoted backslash escapes the next character. A '#' starting a word begins
// a comment.
//
// Everything that would need a shell to mean anything is an error rather than
// literal text, because the user evidently expected a shell: operators
// (| & ; < > ( )), command substitution, $VAR references and leading
// NAME=value assignments. Empty input is an error too.
func SplitWords(s string) ([]string, error) {
	if i := strings.IndexByte(strings.TrimLeft(s, " \t\n"), '='); i > 0 && validName(strings.TrimLeft(s, " \t\n")[:i]) {
		return nil, errors.New("environment assignments before the command are not supported (use: env NAME=value cmd)")
	}
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
			i++
		case c == '#' && !inWord:
			i = len(s)
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			b.WriteString(s[i+1 : i+1+j])
			i, inWord = i+j+2, true
		case c == '"':
			end, err := splitDouble(s, i+1, &b)
			if err != nil {
				return nil, err
			}
			i, inWord = end, true
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New("trailing backslash")
			}
			if s[i+1] != '\n' { // backslash-newline joins lines
				b.WriteByte(s[i+1])
				inWord = true
			}
			i += 2
		case strings.IndexByte("|&;<>()", c) >= 0:
			return nil, fmt.Errorf("shell operator %q is not supported (no shell runs the agent command)", c)
		case c == '`' || (c == '$' && expands(s, i)):
			return nil, errors.New("shell expansion ($..., `...`) is not supported (no shell runs the agent command)")
		default:
			b.WriteByte(c)
			i, inWord = i+1, true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	if words[0] == "" {
		return nil, errors.New("empty command name")
	}
	return words, nil
}

// splitDouble reads a double-quoted part starting just after the quote and
// returns the index after the closing quote.
func splitDouble(s string, i int, b *strings.Builder) (int, error) {
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0:
			if s[i+1] != '\n' {
				b.WriteByte(s[i+1])
			}
			i += 2
		case c == '`' || (c == '$' && expands(s, i)):
			return 0, errors.New("shell expansion ($..., `...`) is not supported (no shell runs the agent command)")
		default:
			b.WriteByte(c)
			i++
		}
	}
	return 0, errors.New("unterminated double quote")
}

// expands says whether the '$' at s[i] starts something a shell would expand.
func expands(s string, i int) bool {
	return i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{' || isNameByte(s[i+1], true))
}

// QuoteValue writes v so that ParseRalphrc reads it back unchanged: bare when
// that is safe, otherwise in single quotes (a ' inside becomes '\”). The
// .ralphrc template and Config.String use it.
func QuoteValue(v string) string {
	safe := v != ""
	for i := 0; i < len(v) && safe; i++ {
		c := v[i]
		safe = isNameByte(c, false) || strings.IndexByte("-./:@%+,=", c) >= 0
	}
	if safe {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// FormatAssignment renders one .ralphrc line, KEY=value, with value quoted as
// QuoteValue does.
func FormatAssignment(key, value string) string { return key + "=" + QuoteValue(value) }
