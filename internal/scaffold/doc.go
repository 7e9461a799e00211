// Package scaffold creates and converts ralph projects: the templates
// embedded in the binary (PROMPT.md, fix_plan.md, AGENT.md, .ralphrc and the
// .gitignore entries), stack detection, task import from a PRD or checklist,
// and the setup, enable and migrate operations behind the commands of the
// same names.
//
// Everything here must be safe in a repository that already has work in it:
// a file that exists is never replaced unless the caller passes Force (and a
// README never, Force or not), .gitignore is only appended to, and nothing is
// committed except by Setup, which commits only the files it created in the
// repository it initialised itself.
//
// Detection and task import are pure (an fs.FS or bytes in, values out); the
// operations take their clock, git runner and executable lookup as options
// so tests control them.
package scaffold
