package telegram

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// Verb is what a chat command asks for.
type Verb string

// The verbs: the client's (`ralph task …`), plus the breaker and the
// watchdog.
const (
	Help     Verb = "help"
	Start    Verb = "start"
	Loop     Verb = "loop"
	Status   Verb = "status"
	Stop     Verb = "stop"
	Cancel   Verb = "cancel"
	List     Verb = "list"
	Reset    Verb = "reset"
	Answer   Verb = "answer"
	Circuit  Verb = "circuit"
	Watchdog Verb = "watchdog"
	Pause    Verb = "pause"
	Resume   Verb = "resume"
	Retry    Verb = "retry"
)

// fleetVerbs are the chat's words for the fleet's commands: every fleet
// verb is here, or in lacks with the reason (the surface-parity test holds
// the bot to it).
var fleetVerbs = map[Verb]fleet.Verb{
	Start: fleet.Start, Loop: fleet.Loop, Stop: fleet.Stop, Cancel: fleet.Cancel, Reset: fleet.Reset,
	Answer: fleet.Answer, Pause: fleet.Pause, Resume: fleet.Resume, Retry: fleet.Retry,
}

// FleetVerbs lists the fleet commands a chat can give, with how to say
// each; start_loop is start's "--loop N".
func FleetVerbs() map[fleet.Verb]string {
	out := map[fleet.Verb]string{fleet.StartLoop: usageOf(Start)}
	for v, fv := range fleetVerbs {
		out[fv] = usageOf(v)
	}
	// Decisions come as buttons only: the notice of a pending tool call
	// carries them, with the decision's id.
	out[fleet.Approve] = "the ✅ Allow once and ☑️ Allow for this task buttons of an approval notice"
	out[fleet.Deny] = "the ⛔ Deny button of an approval notice"
	return out
}

// maxLoopsAsked bounds `/ralph loop N MAX`: a typo of a few digits more
// should not buy a loop for ever.
const maxLoopsAsked = 100000

// Command is one parsed chat command. The text it came from is data: the
// title and the answer are handed on as they are, never interpreted.
type Command struct {
	Verb    Verb
	Session string // "" for status of all, list, help, watchdog
	Title   string // of start
	Text    string // of answer
	Max     int    // of loop, retry, and start with --loop; 0 is the default (100)
	// Problem says why the command was not understood; the reply is then
	// Usage (the line of the verb in question, "" the whole help).
	Problem string
	Usage   string
}

// usage lines, by verb: the help and the replies to a malformed command.
var usage = []struct {
	verb Verb
	line string
}{
	{Start, "/ralph start N [--loop M] task… — start a task on session N (--loop M: and loop it at once)"},
	{Loop, "/ralph loop N [max] — run its loop, up to max iterations (default 100)"},
	{Status, "/ralph status [N] — one session's task, or all"},
	{Stop, "/ralph stop N — stop the loop after its current iteration"},
	{Cancel, "/ralph cancel N — give the task up now"},
	{List, "/ralph list — each session's task"},
	{Reset, "/ralph reset N — reset the circuit breaker"},
	{Retry, "/ralph retry N — reset the breaker and loop again"},
	{Pause, "/ralph pause N — hold the loop before its next iteration"},
	{Resume, "/ralph resume N — let a paused loop go on"},
	{Answer, "/ralph answer N text… — answer its question (or reply to the question)"},
	{Circuit, "/circuit N — the breaker's state and history"},
	{Watchdog, "/watchdog status — what the watchdog watches"},
}

func usageOf(v Verb) string {
	for _, u := range usage {
		if u.verb == v {
			return u.line
		}
	}
	return ""
}

// Parse reads a chat message. ok is false for a message that is not a
// command of this bot (plain text, another bot's command, /ralph@OtherBot):
// it gets no reply. botName is the bot's username ("" while unknown: then
// a command addressed to any bot is taken).
func Parse(text, botName string) (cmd Command, ok bool) {
	head, rest := nextWord(text)
	if !strings.HasPrefix(head, "/") {
		return Command{}, false
	}
	name, to, addressed := strings.Cut(head[1:], "@")
	if addressed && botName != "" && !strings.EqualFold(to, botName) {
		return Command{}, false
	}
	switch strings.ToLower(name) {
	case "start", "help": // what Telegram sends when a person opens the bot
		return Command{Verb: Help}, true
	case "circuit":
		return sessionOnly(Circuit, rest), true
	case "watchdog":
		switch w, more := nextWord(rest); {
		case (w == "" || strings.EqualFold(w, "status")) && more == "":
			return Command{Verb: Watchdog}, true
		default:
			return bad(Watchdog, "unknown watchdog request %q", clipWord(w)), true
		}
	case "ralph":
		return parseRalph(rest), true
	}
	return Command{}, false
}

func parseRalph(text string) Command {
	word, rest := nextWord(text)
	switch v := Verb(strings.ToLower(word)); v {
	case "", Help:
		return Command{Verb: Help}
	case Start:
		s, title := nextWord(rest)
		if c, ok := checkSession(Start, s); !ok {
			return c
		}
		c := Command{Verb: Start, Session: s}
		if w, rest := nextWord(title); isLoopOption(w) {
			m, more := nextWord(rest)
			n, err := strconv.Atoi(m)
			if err != nil || n < 1 || n > maxLoopsAsked {
				return bad(Start, "--loop %q: want a whole number of iterations from 1 to %d", clipWord(m), maxLoopsAsked)
			}
			c.Max, title = n, more
		} else if n, ok := strings.CutPrefix(strings.ToLower(w), "loop="); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v < 1 || v > maxLoopsAsked {
				return bad(Start, "loop=%q: want a whole number of iterations from 1 to %d", clipWord(n), maxLoopsAsked)
			}
			c.Max, title = v, rest
		}
		if title == "" {
			return bad(Start, "the task needs a title")
		}
		c.Title = title
		return c
	case Loop:
		s, rest := nextWord(rest)
		if c, ok := checkSession(Loop, s); !ok {
			return c
		}
		m, more := nextWord(rest)
		if more != "" {
			return bad(Loop, "too many words")
		}
		c := Command{Verb: Loop, Session: s}
		if m != "" {
			n, err := strconv.Atoi(m)
			if err != nil || n < 1 || n > maxLoopsAsked {
				return bad(Loop, "max %q: want a whole number of iterations from 1 to %d", clipWord(m), maxLoopsAsked)
			}
			c.Max = n
		}
		return c
	case Status:
		s, more := nextWord(rest)
		if more != "" {
			return bad(Status, "too many words")
		}
		if s == "" {
			return Command{Verb: Status}
		}
		return sessionOnly(Status, s)
	case List:
		if rest != "" {
			return bad(List, "list takes no session")
		}
		return Command{Verb: List}
	case Stop, Cancel, Reset, Pause, Resume, Retry:
		return sessionOnly(v, rest)
	case Answer:
		s, answer := nextWord(rest)
		if c, ok := checkSession(Answer, s); !ok {
			return c
		}
		if answer == "" {
			return bad(Answer, "the answer is missing")
		}
		return Command{Verb: Answer, Session: s, Text: answer}
	}
	return Command{Verb: Help, Problem: fmt.Sprintf("unknown command %q", clipWord(word))}
}

// isLoopOption is start's --loop, as a phone may type it (an em dash for
// the two hyphens).
func isLoopOption(w string) bool {
	switch strings.ToLower(w) {
	case "--loop", "—loop", "–loop", "-loop":
		return true
	}
	return false
}

// sessionOnly reads a command that takes exactly one session.
func sessionOnly(v Verb, text string) Command {
	s, more := nextWord(text)
	if c, ok := checkSession(v, s); !ok {
		return c
	}
	if more != "" {
		return bad(v, "too many words")
	}
	return Command{Verb: v, Session: s}
}

func checkSession(v Verb, s string) (Command, bool) {
	switch {
	case s == "":
		return bad(v, "which session?"), false
	case !serve.ValidSessionName(s):
		return bad(v, "%q is not a session name (letters, digits, '.', '_', '-')", clipWord(s)), false
	}
	return Command{}, true
}

func bad(v Verb, format string, a ...any) Command {
	return Command{Verb: Help, Problem: fmt.Sprintf(format, a...), Usage: usageOf(v)}
}

// nextWord splits off the first word; rest keeps its inner spacing and
// lines (a title or an answer), trimmed.
func nextWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// clipWord keeps a quoted word of the person's short in a reply.
func clipWord(s string) string {
	if r := []rune(s); len(r) > 32 {
		return string(r[:32]) + "…"
	}
	return s
}
