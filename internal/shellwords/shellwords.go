// Package shellwords splits a configured command (--agent-cmd, AGENT_CMD,
// CODEX_CMD…) or argument list (CLAUDE_ARGS…) into argv words, and quotes
// argv back into a line a user can paste. ralph never runs these through a
// shell, so the split follows a shell's quoting but refuses what only a
// shell could carry out.
//
// The rules, in the order a reader meets them:
//
//   - Blanks (space, tab, newline, carriage return) separate words.
//   - Single quotes keep everything up to the next single quote literally.
//   - Double quotes keep blanks; inside them a backslash escapes only
//     \ " $ ` and newline, and stays literal before anything else.
//   - Outside quotes a backslash escapes the next character;
//     backslash-newline continues the line.
//   - A '#' that starts a word begins a comment to the end of the input.
//   - Nothing is expanded: ~ and globs (*.go) stay as written, and so does
//     a '$' that no shell would expand ("cost $5").
//
// Refused, with an error, because the user evidently expected a shell and
// taking the text literally would run something else than they meant:
//
//   - operators outside quotes: | & ; < > ( )
//   - command substitution and parameter expansion outside single quotes:
//     `…`, $(…), ${…}, $NAME
//   - a leading NAME=value assignment (use: env NAME=value cmd)
//   - unterminated quotes and a trailing lone backslash
//   - an empty input (blank or only a comment) and an empty first word
//
// The errors name only the problem; callers add the key or flag the text
// came from.
package shellwords

import (
	"errors"
	"fmt"
	"strings"
)

// noShell ends the messages of refused shell syntax: it says why the
// syntax cannot work, which is what a user needs to rewrite the command.
const noShell = "(no shell runs the agent command)"

var errExpansion = errors.New("shell expansion ($..., `...`) is not supported " + noShell)

// Split splits s into words following the package's rules.
func Split(s string) ([]string, error) {
	if name, _, ok := strings.Cut(strings.TrimLeft(s, " \t\r\n"), "="); ok && IsName(name) {
		return nil, errors.New("environment assignments before the command are not supported (use: env NAME=value cmd)")
	}
	var (
		words  []string
		b      strings.Builder
		inWord bool // a word has started, even an empty one ('')
	)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isBlank(c):
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
			end, err := double(s, i+1, &b)
			if err != nil {
				return nil, err
			}
			i, inWord = end, true
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New("trailing backslash")
			}
			if s[i+1] != '\n' {
				b.WriteByte(s[i+1])
				inWord = true
			}
			i += 2
		case strings.IndexByte("|&;<>()", c) >= 0:
			return nil, fmt.Errorf("shell operator %q is not supported %s", c, noShell)
		case c == '`' || (c == '$' && expands(s, i)):
			return nil, errExpansion
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

// double reads a double-quoted part starting just after the quote and
// returns the index after the closing quote.
func double(s string, i int, b *strings.Builder) (int, error) {
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
			return 0, errExpansion
		default:
			b.WriteByte(c)
			i++
		}
	}
	return 0, errors.New("unterminated double quote")
}

// expands says whether the '$' at s[i] starts something a shell would
// expand: $(…), ${…} or $NAME. "$5", "$" and "$-x" stay literal.
func expands(s string, i int) bool {
	return i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{' || IsNameByte(s[i+1], true))
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// IsNameByte says whether c may stand in a shell variable name, at its
// start when first is set: a letter or '_', and a digit after the start.
func IsNameByte(c byte, first bool) bool {
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9')
}

// IsName says whether s is a shell variable name (FOO, _x1).
func IsName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !IsNameByte(s[i], i == 0) {
			return false
		}
	}
	return s != ""
}

// Join quotes argv for display so that Split (or a shell) reads back the
// same words: logs and dry runs print a command a user can paste.
func Join(argv []string) string {
	parts := make([]string, len(argv))
	for i, w := range argv {
		parts[i] = quote(w, i == 0)
	}
	return strings.Join(parts, " ")
}

// quote leaves a word bare when that is safe. A first word with '=' is
// quoted: bare, it would read back as an assignment.
func quote(w string, first bool) string {
	safe := w != "" && !(first && strings.Contains(w, "="))
	for i := 0; i < len(w) && safe; i++ {
		c := w[i]
		safe = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-_./:=,+@%", c) >= 0
	}
	if safe {
		return w
	}
	// Inside single quotes nothing is special but the quote itself, which
	// is closed, escaped and reopened.
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
