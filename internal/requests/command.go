package requests

import (
	"strings"
)

// Command is what a comment or a thread reply asks of ralph.
type Command string

const (
	// NoCommand: the text is conversation (an answer, a follow-up).
	NoCommand Command = ""
	// CmdRetry resets the breaker and resumes a halted or stopped request.
	CmdRetry Command = "retry"
	// CmdStatus asks for the status comment to be refreshed.
	CmdStatus Command = "status"
	// CmdUnknown is a "/ralph" line ralph does not understand.
	CmdUnknown Command = "unknown"
)

// ParseCommand reads a command from the first non-empty line of text:
// "/ralph retry" (or "@ralph retry") on GitHub; in Slack a reply that is
// only "retry" (after the bot's mention, which the caller strips) counts
// too. Anything else is conversation.
func ParseCommand(text string) Command {
	line := ""
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	f := strings.Fields(strings.ToLower(line))
	if len(f) == 0 {
		return NoCommand
	}
	if f[0] == "/ralph" || f[0] == "@ralph" {
		if len(f) < 2 {
			return CmdUnknown
		}
		switch strings.Trim(f[1], ".!") {
		case "retry", "resume":
			return CmdRetry
		case "status":
			return CmdStatus
		}
		return CmdUnknown
	}
	if len(f) == 1 {
		switch strings.Trim(f[0], ".!") {
		case "retry":
			return CmdRetry
		}
	}
	return NoCommand
}
