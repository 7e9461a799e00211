package telegram

import (
	"strings"
	"testing"
	"unicode/utf8"

	"ralph/internal/serve"
)

func TestParse(t *testing.T) {
	const me = "ralph_bot"
	cases := []struct {
		text string
		ok   bool
		want Command
	}{
		{"/ralph", true, Command{Verb: Help}},
		{"/ralph help", true, Command{Verb: Help}},
		{"/start", true, Command{Verb: Help}},
		{"/help", true, Command{Verb: Help}},
		{"/ralph start 5 Implement user authentication", true, Command{Verb: Start, Session: "5", Title: "Implement user authentication"}},
		{"  /ralph   start   api  Add  rate limiting\nto the public endpoints ", true,
			Command{Verb: Start, Session: "api", Title: "Add  rate limiting\nto the public endpoints"}},
		{"/ralph start 5 `rm -rf /`; $(reboot)", true, Command{Verb: Start, Session: "5", Title: "`rm -rf /`; $(reboot)"}},
		{"/ralph START 5 x", true, Command{Verb: Start, Session: "5", Title: "x"}},
		{"/ralph start 5 --loop 30 Add login", true, Command{Verb: Start, Session: "5", Title: "Add login", Max: 30}},
		{"/ralph start 5 —loop 30 Add login", true, Command{Verb: Start, Session: "5", Title: "Add login", Max: 30}}, // a phone's em dash
		{"/ralph start 5 loop=7 Add login", true, Command{Verb: Start, Session: "5", Title: "Add login", Max: 7}},
		{"/ralph start 5 loop the loop", true, Command{Verb: Start, Session: "5", Title: "loop the loop"}},
		{"/ralph pause 5", true, Command{Verb: Pause, Session: "5"}},
		{"/ralph resume 5", true, Command{Verb: Resume, Session: "5"}},
		{"/ralph retry 5", true, Command{Verb: Retry, Session: "5"}},
		{"/ralph loop 5", true, Command{Verb: Loop, Session: "5"}},
		{"/ralph loop 5 50", true, Command{Verb: Loop, Session: "5", Max: 50}},
		{"/ralph status", true, Command{Verb: Status}},
		{"/ralph status 5", true, Command{Verb: Status, Session: "5"}},
		{"/ralph stop 5", true, Command{Verb: Stop, Session: "5"}},
		{"/ralph cancel 5", true, Command{Verb: Cancel, Session: "5"}},
		{"/ralph list", true, Command{Verb: List}},
		{"/ralph reset 5", true, Command{Verb: Reset, Session: "5"}},
		{"/ralph answer 5 Use SQLite, please.", true, Command{Verb: Answer, Session: "5", Text: "Use SQLite, please."}},
		{"/circuit 5", true, Command{Verb: Circuit, Session: "5"}},
		{"/watchdog status", true, Command{Verb: Watchdog}},
		{"/watchdog", true, Command{Verb: Watchdog}},
		// Addressed to this bot (groups), case aside; to another: not ours.
		{"/ralph@ralph_bot status 5", true, Command{Verb: Status, Session: "5"}},
		{"/ralph@Ralph_Bot list", true, Command{Verb: List}},
		{"/circuit@ralph_bot 5", true, Command{Verb: Circuit, Session: "5"}},
		{"/ralph@other_bot list", false, Command{}},
		// Not commands of this bot.
		{"hello", false, Command{}},
		{"", false, Command{}},
		{"ralph start 5 x", false, Command{}},
		{"/deploy now", false, Command{}},
		{"/ralphx list", false, Command{}},
		// Malformed: the help line that fits.
		{"/ralph start", true, Command{Verb: Help, Problem: "which session?", Usage: usageOf(Start)}},
		{"/ralph start 5", true, Command{Verb: Help, Problem: "the task needs a title", Usage: usageOf(Start)}},
		{"/ralph start ../x title", true, Command{Verb: Help, Problem: `"../x" is not a session name (letters, digits, '.', '_', '-')`, Usage: usageOf(Start)}},
		{"/ralph loop 5 many", true, Command{Verb: Help, Problem: `max "many": want a whole number of iterations from 1 to 100000`, Usage: usageOf(Loop)}},
		{"/ralph loop 5 0", true, Command{Verb: Help, Problem: `max "0": want a whole number of iterations from 1 to 100000`, Usage: usageOf(Loop)}},
		{"/ralph loop 5 99999999999999999999", true, Command{Verb: Help, Problem: `max "99999999999999999999": want a whole number of iterations from 1 to 100000`, Usage: usageOf(Loop)}},
		{"/ralph loop 5 10 20", true, Command{Verb: Help, Problem: "too many words", Usage: usageOf(Loop)}},
		{"/ralph stop", true, Command{Verb: Help, Problem: "which session?", Usage: usageOf(Stop)}},
		{"/ralph stop 5 now", true, Command{Verb: Help, Problem: "too many words", Usage: usageOf(Stop)}},
		{"/ralph status 5 6", true, Command{Verb: Help, Problem: "too many words", Usage: usageOf(Status)}},
		{"/ralph list 5", true, Command{Verb: Help, Problem: "list takes no session", Usage: usageOf(List)}},
		{"/ralph answer 5", true, Command{Verb: Help, Problem: "the answer is missing", Usage: usageOf(Answer)}},
		{"/circuit", true, Command{Verb: Help, Problem: "which session?", Usage: usageOf(Circuit)}},
		{"/watchdog restart", true, Command{Verb: Help, Problem: `unknown watchdog request "restart"`, Usage: usageOf(Watchdog)}},
		{"/ralph frobnicate 5", true, Command{Verb: Help, Problem: `unknown command "frobnicate"`}},
	}
	for _, c := range cases {
		got, ok := Parse(c.text, me)
		if ok != c.ok || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", c.text, got, ok, c.want, c.ok)
		}
	}
	// Before the bot knows its name, an addressed command is taken.
	if got, ok := Parse("/ralph@whoever list", ""); !ok || got.Verb != List {
		t.Errorf("unknown name: %+v %v", got, ok)
	}
}

// Whatever a chat sends, Parse does not panic, and what it returns is
// consistent: a session it names is a session name, a start has a title,
// a problem comes with the help.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"/ralph start 5 Build it", "/ralph loop 5 10", "/ralph@x status", "/circuit 5",
		"/watchdog status", "/ralph answer 5 yes", "/ralph", "/ralph loop 5 -1", "/ralph start \u00a05 x", "/ralph\tstop\n5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, ok := Parse(text, "ralph_bot")
		if !ok {
			if c != (Command{}) {
				t.Fatalf("not a command, yet %+v", c)
			}
			return
		}
		if c.Session != "" && !serve.ValidSessionName(c.Session) {
			t.Fatalf("session %q", c.Session)
		}
		switch c.Verb {
		case Start:
			if strings.TrimSpace(c.Title) == "" || c.Session == "" {
				t.Fatalf("start %+v", c)
			}
		case Answer:
			if strings.TrimSpace(c.Text) == "" || c.Session == "" {
				t.Fatalf("answer %+v", c)
			}
		case Loop:
			if c.Max < 0 || c.Max > maxLoopsAsked {
				t.Fatalf("loop %+v", c)
			}
		case Help:
		default:
			if c.Problem != "" {
				t.Fatalf("a problem without the help: %+v", c)
			}
		}
		if utf8.ValidString(text) && !utf8.ValidString(c.Problem) {
			t.Fatalf("problem %q", c.Problem)
		}
	})
}
