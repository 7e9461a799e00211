package agent

import (
	"errors"
	"strings"
)

// SplitWords splits a command string (--agent-cmd, CLAUDE_CODE_CMD) into
// argv words the way a POSIX shell would, without running a shell: blanks
// separate words, single quotes keep everything literally, double quotes
// keep blanks and let a backslash escape only $ ` " \ and newline, and a
// backslash outside quotes escapes the next character (backslash-newline is
// a line continuation). Nothing is expanded: no $VAR, ~, globs or command
// substitution, because running the user's command through a shell would
// also run whatever else the string holds.
//
// Unbalanced quotes and a trailing lone backslash are errors.
func SplitWords(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool // a word has started, even if empty ("")
		quote   byte // 0, '\'' or '"'
		escaped bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
			if c == '\n' {
				continue // line continuation
			}
			cur.WriteByte(c)
			inWord = true
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0:
				i++
				if s[i] != '\n' {
					cur.WriteByte(s[i])
				}
			default:
				cur.WriteByte(c)
			}
		case c == '\\':
			escaped = true
		case c == '\'' || c == '"':
			quote = c
			inWord = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	switch {
	case quote == '\'':
		return nil, errors.New("unterminated single quote")
	case quote == '"':
		return nil, errors.New("unterminated double quote")
	case escaped:
		return nil, errors.New("trailing backslash")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// JoinWords quotes argv for display so that SplitWords (or a shell) reads
// back the same words: logs and dry runs print a command a user can paste.
func JoinWords(argv []string) string {
	parts := make([]string, len(argv))
	for i, w := range argv {
		parts[i] = quoteWord(w)
	}
	return strings.Join(parts, " ")
}

func quoteWord(w string) string {
	if w == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-_./:=,+@%", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return w
	}
	// Inside single quotes nothing is special but the quote itself, which
	// is closed, escaped and reopened.
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
