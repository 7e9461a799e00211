package fleet

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// More verbs: the one-step start, and a request's retry.
const (
	// StartLoop creates a task and loops it at once: the one step that
	// starts work from any surface.
	StartLoop Verb = "start_loop"
	// Retry resets a halted task's breaker and loops it again: what a
	// request's "/ralph retry" asks.
	Retry Verb = "retry"
	// Approve and Deny decide a tool call the agent waits on inside its
	// call (Command.Item names it): allow it once, or refuse it with
	// Text as the reason the agent reads.
	Approve Verb = "approve"
	Deny    Verb = "deny"
)

// Verbs is every command a person can give the fleet, in the order the
// help lists them. Every surface offers each of them, or says in its
// surface table why it does not (see Surface).
func Verbs() []Verb {
	return []Verb{Start, StartLoop, Loop, Pause, Resume, Stop, Cancel, Reset, Retry, Answer, Approve, Deny}
}

// Surface is where a command came from.
type Surface string

// The surfaces that reach the fleet.
const (
	SurfaceCLI      Surface = "cli"      // ralph task, through the API
	SurfaceAPI      Surface = "api"      // another client of the API
	SurfaceWeb      Surface = "web"      // the dashboard
	SurfaceTelegram Surface = "telegram" // a chat command
	SurfaceGitHub   Surface = "github"   // an issue, a comment
	SurfaceSlack    Surface = "slack"    // a mention, a thread reply
	SurfaceWatchdog Surface = "watchdog" // the daemon's own watchdog
)

// Valid reports a known surface.
func (s Surface) Valid() bool {
	switch s {
	case SurfaceCLI, SurfaceAPI, SurfaceWeb, SurfaceTelegram, SurfaceGitHub, SurfaceSlack, SurfaceWatchdog:
		return true
	}
	return false
}

// Who asked: the surface and, where it knows one, the person (a chat
// user, a GitHub login, a Slack user id, the client's OS user).
type Who struct {
	Surface Surface `json:"surface"`
	User    string  `json:"user,omitempty"`
}

func (w Who) String() string {
	if w.User == "" {
		return string(w.Surface)
	}
	return string(w.Surface) + ":" + w.User
}

// Command is one request of a person to the fleet, from any surface: the
// one shape every surface turns its input into.
type Command struct {
	Verb    Verb   `json:"verb"`
	Session string `json:"session"`
	// Title is the work of a new task (start, start_loop).
	Title string `json:"title,omitempty"`
	// MaxLoops bounds a loop (loop, start_loop); 0 takes the default.
	MaxLoops int `json:"max_loops,omitempty"`
	// Text is an answer (answer), or why a tool call is refused (deny).
	Text string `json:"text,omitempty"`
	// Item is the pending decision a command is for (approve, deny): the
	// id the task shows ("a1").
	Item string `json:"item,omitempty"`
	// ForTask widens an approve to the rest of the task: the same tool
	// and, for Bash, the same command string, allowed without asking.
	ForTask bool `json:"for_task,omitempty"`
	// Origin is where a new task came from (cli, telegram, github, slack);
	// ReplyTo the place its notices go back to (a chat id).
	Origin  string `json:"origin,omitempty"`
	ReplyTo string `json:"reply_to,omitempty"`
	// OriginURL is the page a new task came from (a GitHub issue, a Slack
	// thread's permalink), linked from its history; http(s) only.
	OriginURL string `json:"origin_url,omitempty"`
	Who       Who    `json:"who"`
}

// Bounds of a command's text: a title is a line, an answer a message.
const (
	MaxTitle  = 500
	MaxAnswer = 20000
	MaxLoops  = 100000
)

// Validate checks the command's shape, naming the field that is wrong;
// whether the task's state allows it is Check's question.
func (c Command) Validate() error {
	known := false
	for _, v := range Verbs() {
		known = known || v == c.Verb
	}
	if !known && c.Verb != Status {
		return refuse(Invalid, "verb: unknown command %q (want one of %s)", c.Verb, verbList())
	}
	if strings.TrimSpace(c.Session) == "" {
		return refuse(Invalid, "session: a command names the session it is for")
	}
	if !c.Who.Surface.Valid() {
		return refuse(Invalid, "who.surface: unknown surface %q", c.Who.Surface)
	}
	switch c.Verb {
	case Start, StartLoop:
		t := strings.TrimSpace(c.Title)
		if t == "" {
			return refuse(Invalid, "title: a task needs a title (what to do)")
		}
		if utf8.RuneCountInString(t) > MaxTitle {
			return refuse(Invalid, "title: %d characters; at most %d (put the details in the task file)", utf8.RuneCountInString(t), MaxTitle)
		}
	case Answer:
		t := strings.TrimSpace(c.Text)
		if t == "" {
			return refuse(Invalid, "text: an answer needs its text")
		}
		if utf8.RuneCountInString(t) > MaxAnswer {
			return refuse(Invalid, "text: %d characters; at most %d", utf8.RuneCountInString(t), MaxAnswer)
		}
	}
	if c.ForTask && c.Verb != Approve {
		return refuse(Invalid, "for_task: only approve allows for the rest of the task, not %s", c.Verb)
	}
	if c.Verb == Approve || c.Verb == Deny {
		if strings.TrimSpace(c.Item) == "" {
			return refuse(Invalid, "item: %s names the pending decision (its id, as the task shows it)", c.Verb)
		}
		if utf8.RuneCountInString(c.Text) > MaxAnswer {
			return refuse(Invalid, "text: %d characters; at most %d", utf8.RuneCountInString(c.Text), MaxAnswer)
		}
	}
	if c.OriginURL != "" && !webURL(c.OriginURL) {
		return refuse(Invalid, "origin_url: %q is not an http(s) address", c.OriginURL)
	}
	if c.MaxLoops < 0 || c.MaxLoops > MaxLoops {
		return refuse(Invalid, "max_loops: %d; want 0 (the default) to %d", c.MaxLoops, MaxLoops)
	}
	return nil
}

func verbList() string {
	var s []string
	for _, v := range Verbs() {
		s = append(s, string(v))
	}
	return strings.Join(s, ", ")
}

// Did says what a command did, for the task's record and the replies:
// "stop by telegram:alice".
func (c Command) Did() string {
	return fmt.Sprintf("%s by %s", c.Verb, c.Who)
}

// ClipTitle shortens a title to MaxTitle characters, for a surface whose
// titles come from elsewhere (an issue, a chat message) and must not be
// refused for their length.
func ClipTitle(title string) string {
	t := strings.Join(strings.Fields(title), " ")
	if utf8.RuneCountInString(t) <= MaxTitle {
		return t
	}
	r := []rune(t)
	return string(r[:MaxTitle-1]) + "…"
}

// webURL says whether s is an absolute http(s) address of at most 2000
// characters: what a page may link to.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && len(s) <= 2000 && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
