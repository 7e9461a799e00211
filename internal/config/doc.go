// Package config holds ralph's configuration: the key table (Describe), the
// .ralphrc reader, the environment and flag layers, and Resolve, which turns
// them into one plain Config once, at start-up.
//
// Precedence is flags > environment > .ralphrc > defaults. Loaders return
// warnings instead of logging them; the caller decides where they go.
//
// # Reading .ralphrc
//
// The bash tool ralph replaces used to `source` its .ralphrc, and later
// switched to reading it as data because the file comes with the repository
// (its issue #346). ralph only ever reads it as data:
//
//   - Lines are KEY=value or export KEY=value; blank lines and # comments are
//     skipped; CRLF line ends and a leading BOM are fine.
//   - Quoting follows bash: '...' is literal; "..." honours \" \\ \$ \` and
//     keeps other backslashes ("\n" stays two characters, as in bash); an
//     unquoted \x is x; # starts a comment only after whitespace.
//   - $VAR, ${VAR}, ${VAR:-default} and ${VAR-default} are expanded, from
//     variables assigned on earlier lines and then from the environment given
//     to ParseRalphrcEnv, because the bash tool's own template wrote
//     PROJECT_NAME="${PROJECT_NAME:-my-project}". A leading ~/ is $HOME.
//     Nothing else is expanded and nothing is ever run: $(...) and `...` stay
//     in the value as written, with a warning naming the line.
//   - A bad line (no '=', a bad key, spaces around '=', an unterminated quote,
//     text after the value, control characters) is a warning naming file and
//     line, and the line is skipped. Only a non-text file (NUL byte) is an
//     error. Quotes must close on the same line: multi-line values and
//     backslash continuation lines are not supported.
//   - Unknown keys are warned about, with a "did you mean" for near misses.
//     Secret-looking names (ANTHROPIC_API_KEY, *_TOKEN, *_KEY, *SECRET*,
//     *PASSWORD*) are kept in Config.Secrets for the agent's environment, as
//     Secret values that never print, with a warning that the repository is a
//     risky place for them.
//   - The last assignment of a key wins, with a warning.
//
// # Values
//
// An empty value means "not set" in every layer (the bash tool tested with
// -n), except OPTIONAL_SECTIONS, where empty means "no optional sections".
// Bad values (MAX_CALLS_PER_HOUR=abc, a negative threshold, a percentage over
// 100) are errors naming their source, unless a higher layer overrides the
// key with a good value; then they are warnings.
//
// Following the bash tool's rules for repository files, a .ralphrc may only
// set RALPH_DIR (and the unsupported RALPH_SHELL_INIT_FILE and sandbox image,
// template and network keys) to their stock values; other values are ignored
// with a warning and must come from the environment or a flag. AGENT_CMD
// (CLAUDE_CODE_CMD), the other *_CMD and *_ARGS keys and CODEX_SANDBOX are
// honoured from .ralphrc as DESIGN.md requires, but a non-stock value is
// listed by NeedsTrust and runs nothing until the user trusts the file.
//
// Keys of the bash tool that ralph does not implement (KeyInfo.Unsupported)
// accept only their default; any other value is an error.
//
// # Environment
//
// Every key can be set as RALPH_<KEY>. Keys the bash tool knew (and its
// aliases, such as CLAUDE_CODE_CMD or ENABLE_NOTIFICATIONS) are also read
// under their own names, as its documentation promised; keys new in ralph are
// not, because bare DELAY or VERBOSE are too generic.
package config
