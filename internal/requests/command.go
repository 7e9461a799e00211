package requests

import (
	"strings"

	"ralph/internal/fleet"
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
	// CmdStop ends the loop after its iteration; CmdCancel gives the
	// request up; CmdPause holds a running loop, CmdResume lets it go on
	// (or, for a halted or stopped request, is a retry).
	CmdStop   Command = "stop"
	CmdCancel Command = "cancel"
	CmdPause  Command = "pause"
	CmdResume Command = "resume"
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
		case "retry":
			return CmdRetry
		case "resume":
			return CmdResume
		case "status":
			return CmdStatus
		case "stop":
			return CmdStop
		case "cancel":
			return CmdCancel
		case "pause":
			return CmdPause
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

// FleetVerbs lists the fleet commands a GitHub issue or a Slack thread
// gives, with how; Lacks the ones it does not, and why.
func FleetVerbs() (offers, lacks map[fleet.Verb]string) {
	return map[fleet.Verb]string{
			fleet.StartLoop: "the label on an issue, a mention in a channel",
			fleet.Answer:    "a reply in the thread",
			fleet.Retry:     "/ralph retry",
			fleet.Stop:      "/ralph stop",
			fleet.Cancel:    "/ralph cancel",
			fleet.Pause:     "/ralph pause",
			fleet.Resume:    "/ralph resume",
		}, map[fleet.Verb]string{
			fleet.Start:   "a request always works toward its pull request: it starts and loops in one step",
			fleet.Loop:    "a request loops by itself; /ralph retry loops a stopped or halted one again",
			fleet.Reset:   "/ralph retry resets the breaker and loops again: a reset alone would leave the request idle",
			fleet.Approve: "not yet: a request's tool calls are decided on the chat, the dashboard or with ralph task approve",
			fleet.Deny:    "not yet: a request's tool calls are decided on the chat, the dashboard or with ralph task deny",
		}
}
