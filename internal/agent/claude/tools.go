package claude

import "slices"

// defaultAllowedTools: see DefaultAllowedTools.
var defaultAllowedTools = []string{
	// File tools. Read-only ones are listed too so the list is complete on
	// its own when a user's settings tighten the defaults.
	"Write", "Read", "Edit", "MultiEdit", "Glob", "Grep", "TodoWrite",

	// git that records or inspects work but cannot destroy it: no push,
	// reset, clean, restore, stash, rebase, or branch deletion.
	"Bash(git status *)",
	"Bash(git diff *)",
	"Bash(git log *)",
	"Bash(git show *)",
	"Bash(git add *)",
	"Bash(git commit *)",
	"Bash(git mv *)",
	"Bash(git rev-parse *)",
	"Bash(git ls-files *)",
	"Bash(git blame *)",
	"Bash(git grep *)",
	"Bash(git branch)", // listing only: "git branch -D" deletes work
	"Bash(git branch --list *)",
	"Bash(git branch --show-current *)",
	"Bash(git checkout -b *)",
	"Bash(git switch -c *)",

	// Builds and test runners.
	"Bash(go test *)", "Bash(go build *)", "Bash(go vet *)", "Bash(gofmt *)",
	"Bash(npm test *)", "Bash(npm run *)", "Bash(npx jest *)", "Bash(npx vitest *)",
	"Bash(yarn test *)", "Bash(pnpm test *)", "Bash(bun test *)",
	"Bash(pytest *)", "Bash(python -m pytest *)", "Bash(python3 -m pytest *)",
	"Bash(cargo test *)", "Bash(cargo build *)", "Bash(cargo check *)", "Bash(cargo clippy *)",
	"Bash(mvn *)", "Bash(./mvnw *)", "Bash(gradle *)", "Bash(./gradlew *)",
	"Bash(make *)", "Bash(bats *)",
}

// DefaultAllowedTools returns (a copy of) ralph's default allow-list for
// Claude Code: the file tools, git commands that cannot destroy work, and
// common build and test runners.
//
// Patterns use Claude Code's documented "Bash(cmd *)" form: the space before
// the "*" is a word boundary, so "Bash(make *)" allows "make" and "make
// test" but not "makeself", while "Bash(make*)" would allow all three. The
// legacy "Bash(cmd:*)" form means the same as "Bash(cmd *)". Checked against
// Claude Code 2.1.329: "Bash(touch *)" allows a bare "touch",
// "Bash(touc *)" refuses "touch x", "Bash(touc*)" allows it. Claude checks
// every part of a chained or piped command separately, so "go test ./... &&
// rm -rf x" is not allowed by "Bash(go test *)".
func DefaultAllowedTools() []string {
	return slices.Clone(defaultAllowedTools)
}
