package agent

import "ralph/internal/shellwords"

// JoinWords quotes argv for display (shellwords.Join): logs and dry runs
// print a command a user can paste.
func JoinWords(argv []string) string { return shellwords.Join(argv) }
