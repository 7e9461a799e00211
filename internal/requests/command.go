package requests

import (
	"regexp"
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
	// CmdApprove, CmdDeny and CmdAnswer decide what the agent waits on
	// inside its call (Parsed.Item names it): allow a tool call (once, or
	// for the rest of the task), refuse it, answer its question.
	CmdApprove Command = "approve"
	CmdDeny    Command = "deny"
	CmdAnswer  Command = "answer"
	// CmdUnknown is a "/ralph" line ralph does not understand.
	CmdUnknown Command = "unknown"
)

// Parsed is a command with its arguments.
type Parsed struct {
	Cmd Command
	// Item is the pending approval or question a gate command is for
	// ("a1", "q2"); "" for an answer that names none.
	Item string
	// ForTask: approve for the rest of the task (--task).
	ForTask bool
	// Text is a denial's reason or an answer, as written (its case and
	// its later lines kept).
	Text string
	// Problem says what is wrong with a gate command that cannot be
	// carried out as written (no id, no answer), for the reply.
	Problem string
}

// itemID is the shape of a pending item's id as the task shows it.
var itemID = regexp.MustCompile(`^[aq][0-9]{1,9}$`)

// Gate reports a command that decides a pending item.
func (c Command) Gate() bool { return c == CmdApprove || c == CmdDeny || c == CmdAnswer }

// ParseCommand reads a command from the first non-empty line of text:
// "/ralph retry" (or "@ralph retry") on GitHub; in Slack a reply that is
// only "retry" (after the bot's mention, which the caller strips) counts
// too. Anything else is conversation.
func ParseCommand(text string) Command { return Parse(text).Cmd }

// Parse reads a command and its arguments from text (see ParseCommand).
// The gate's commands take arguments: "/ralph approve a1", "/ralph
// approve a1 --task", "/ralph deny a1 [reason…]", "/ralph answer [q1]
// text…"; a reason or an answer may go on over the lines below. In Slack,
// where "/ralph" would be taken for a slash command, "approve a1", "deny
// a1 …" and "answer q1 …" count bare, with an id that looks like one.
func Parse(text string) Parsed {
	line, rest := "", ""
	for l := range strings.SplitSeq(text, "\n") {
		if line != "" {
			rest += l + "\n"
			continue
		}
		line = strings.TrimSpace(l)
	}
	f := strings.Fields(strings.ToLower(line))
	if len(f) == 0 {
		return Parsed{}
	}
	orig := strings.Fields(line)
	if f[0] == "/ralph" || f[0] == "@ralph" {
		if len(f) < 2 {
			return Parsed{Cmd: CmdUnknown}
		}
		if c := Command(strings.Trim(f[1], ".!:,")); c.Gate() {
			return parseGate(c, orig[2:], rest)
		}
		return Parsed{Cmd: parseVerb(f)}
	}
	if c := Command(strings.Trim(f[0], ":,")); c.Gate() && len(f) > 1 && bareItem(c, strings.Trim(f[1], ".!:,")) {
		return parseGate(c, orig[1:], rest)
	}
	if len(f) == 1 {
		switch strings.Trim(f[0], ".!") {
		case "retry":
			return Parsed{Cmd: CmdRetry}
		}
	}
	return Parsed{}
}

// bareItem says whether id may follow a bare gate verb: an approval's id
// after approve or deny, a question's after answer.
func bareItem(c Command, id string) bool {
	return itemID.MatchString(id) && (id[0] == 'q') == (c == CmdAnswer)
}

// parseGate reads a gate command's arguments: args are the words after
// the verb on its line, rest the lines below.
func parseGate(c Command, args []string, rest string) Parsed {
	p := Parsed{Cmd: c}
	if len(args) > 0 {
		if id := strings.ToLower(strings.Trim(args[0], ".!:,")); bareItem(c, id) {
			p.Item, args = id, args[1:]
		}
	}
	if c == CmdApprove {
		for _, a := range args {
			switch strings.ToLower(a) {
			case "--task", "—task", "-task":
				p.ForTask = true
			}
		}
	}
	p.Text = strings.TrimSpace(strings.Join(args, " ") + "\n" + rest)
	if c == CmdApprove {
		p.Text = ""
	}
	switch {
	case c != CmdAnswer && p.Item == "":
		p.Problem = "say which one: /ralph " + string(c) + " ID (the id the message shows, like a1)"
	case c == CmdAnswer && p.Text == "":
		p.Problem = "an answer needs its text: /ralph answer [ID] TEXT"
	}
	return p
}

// parseVerb is the command of a "/ralph VERB" line (f lower case).
func parseVerb(f []string) Command {
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
			fleet.Approve:   "/ralph approve ID [--task] in the thread by a writer or an allowed user; Slack's Allow once and Allow for this task buttons",
			fleet.Deny:      "/ralph deny ID [reason] in the thread by a writer or an allowed user; Slack's Deny button",
		}, map[fleet.Verb]string{
			fleet.Start: "a request always works toward its pull request: it starts and loops in one step",
			fleet.Loop:  "a request loops by itself; /ralph retry loops a stopped or halted one again",
			fleet.Reset: "/ralph retry resets the breaker and loops again: a reset alone would leave the request idle",
		}
}
