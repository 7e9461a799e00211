package analyze

import (
	"bytes"
	"strings"
	"time"

	claudewire "ralph/internal/agent/claude/wire"
	codexwire "ralph/internal/agent/codex/wire"
	geminiwire "ralph/internal/agent/gemini/wire"
)

// maxFinalText bounds the agent's final message kept for the wording
// heuristics; status blocks sit at its end, so the tail is what is kept.
const maxFinalText = 256 << 10

// collector accumulates what the events of one output say. Everything it
// keeps is bounded, whatever the input's size.
type collector struct {
	opts Options
	low  []byte // scratch for lowerBuf
	// The agents' formats, each read by its own wire package's scanner,
	// which hands the facts back to the collector.
	claude *claudewire.Scanner
	codex  *codexwire.Scanner
	gemini *geminiwire.Scanner
	blocks blockParser
	errs   errorList
	notes  warnSet

	// The agent's final message: the result text when there is one,
	// otherwise its last assistant message.
	resultText    *tailBuf
	lastAssistant *tailBuf
	lastMsgID     string
	plainText     *tailBuf // all text of a plain-text output

	// inEvent: an event is being read; deltaEvent: it gave a piece of
	// streamed text; pendingDelta: the pieces so far are not yet read as a
	// message; resultEvent: it was a Result (which may carry the flat
	// schema's fields).
	inEvent, deltaEvent, pendingDelta, resultEvent bool

	testCmds, implCalls, implCues int
	editedFiles                   map[string]bool
	statEdits                     int // successful edits counted by Gemini's stats, files unnamed
	testsStatus                   string

	sawResult, resultOK bool // a Result; resultOK: it said the call succeeded
	isError             bool
	sessionID           string
	initSessionID       string
	usage               Usage
	resultUsage         bool             // a result-level account (tokens or only a cost) was read
	resultTokens        bool             // …and it gave token counts
	msgUsage            map[string]Usage // per assistant message id, when no result
	msgOrder            []string
	denials             []Denial
	asked               []string // questions asked with a refused question tool (askuser.go)
	askTool             string
	toolCalls           int

	limit limitState
	// windows are the usage windows the rate-limit events told of, the
	// last word on each kind kept.
	windows []Window
	// stderrLines are the first lines of stderr (setup failures).
	stderrLines []string
	flat        flatFields

	jsonValues, typedEvents, textLines int
	skippedLong                        int
	streamOnly                         bool // the single JSON value is a transcript event
}

type limitState struct {
	rejected   bool // rate_limit_event status rejected
	flagged    bool // api_error usage_limit_reached
	api429     bool
	resetEpoch time.Time
	kind       string
	textKind   string
	textMsg    string
	textReset  time.Time
	zoneNote   string
	hasText    bool
}

// flatFields are the older flat schema's self-reported values.
type flatFields struct {
	present                                       bool
	status, workType, summary, tests, recommend   string
	exitSignal, exitSignalSet                     bool
	filesModified, tasksCompleted, tasksRemaining *int
}

func newCollector(opts Options) *collector {
	c := &collector{
		opts:          opts,
		resultText:    newTailBuf(maxFinalText),
		lastAssistant: newTailBuf(maxFinalText),
		plainText:     newTailBuf(maxFinalText),
		editedFiles:   map[string]bool{},
		msgUsage:      map[string]Usage{},
	}
	c.claude, c.codex, c.gemini = claudewire.NewScanner(c), codexwire.NewScanner(c), geminiwire.NewScanner(c)
	return c
}

// ownLine handles one line of the agent's own words. Cheap keyword checks on
// a lower-cased copy decide which of the (slower) patterns to try: most lines
// of a long session match none.
//
// Messages of a structured transcript get only what every message needs
// (blocks, errors, limits); the cues about tests and edits are read from the
// final message at the end, since the tool calls tell the rest.
func (c *collector) ownLine(l string, cues bool) {
	c.blocks.line(l)
	m := hotWords.mask(l)
	if m&errorKw != 0 && !c.errs.full() {
		if e, ok := errorLineMask(l, m); ok {
			c.errs.add(e)
		}
	}
	if m&limitKw != 0 {
		c.limitTextMask(l, m)
	}
	if cues {
		c.cues(l, c.lowerBuf(l))
	}
}

// cues reads what a line says about tests run and work done.
func (c *collector) cues(l string, low []byte) {
	if hasAny(low, testsWords) {
		if st := testsStatusOf(l); st != "" {
			c.testsStatus = st
		}
		if isTestCommand(strings.TrimSpace(l)) {
			c.testCmds++
		}
	}
	if implCue.MatchString(strings.TrimSpace(l)) {
		c.implCues++
	}
}

var (
	testsWords = [][]byte{[]byte("test"), []byte("pass"), []byte("fail"), []byte("ok"), []byte("jest"),
		[]byte("bats"), []byte("rspec"), []byte("mocha"), []byte("tox"), []byte("verify"), []byte("check")}
)

func hasAny(low []byte, words [][]byte) bool {
	for _, w := range words {
		if bytes.Contains(low, w) {
			return true
		}
	}
	return false
}

// lowerBuf is an ASCII lower-case copy of l in a reused buffer.
func (c *collector) lowerBuf(l string) []byte {
	b := c.low[:0]
	for i := 0; i < len(l); i++ {
		ch := l[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		b = append(b, ch)
	}
	c.low = b
	return b
}

// ownMessage handles one complete message of the agent's own words.
func (c *collector) ownMessage(text string) {
	for {
		l, rest, more := strings.Cut(text, "\n")
		c.ownLine(strings.TrimSuffix(l, "\r"), false)
		if !more {
			break
		}
		text = rest
	}
	c.blocks.endMessage()
}

// limitText notes the first usage-limit announcement in a line.
func (c *collector) limitText(l string) { c.limitTextMask(l, hotWords.mask(l)) }

// limitTextMask is limitText given the line's hotWords mask.
func (c *collector) limitTextMask(l string, m uint32) {
	if c.limit.hasText {
		return
	}
	kind, ok := matchLimitMask(l, m)
	if !ok {
		return
	}
	c.limit.hasText = true
	c.limit.textKind = kind
	msg := strings.TrimSpace(l)
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	c.limit.textMsg = strings.Clone(msg)
	if t, ok, note := parseReset(l, c.opts.Now); ok {
		c.limit.textReset = t
		c.limit.zoneNote = note
	}
}

func (c *collector) addDenial(tool, command string) {
	for _, d := range c.denials {
		if d.Tool == tool && d.Command == command {
			return
		}
	}
	if len(c.denials) < 100 {
		c.denials = append(c.denials, Denial{Tool: strings.Clone(tool), Command: strings.Clone(command)})
	}
}

func (c *collector) addStructuredError(e string) {
	e = strings.TrimSpace(e)
	if e == "" {
		return
	}
	c.errs.add(clip(e, maxErrorText))
}

// tailBuf keeps the last max bytes written to it.
type tailBuf struct {
	b   []byte
	max int
	set bool
}

func newTailBuf(max int) *tailBuf { return &tailBuf{max: max} }

func (t *tailBuf) reset() { t.b = t.b[:0]; t.set = false }

func (t *tailBuf) write(s string) {
	t.set = true
	t.b = append(t.b, s...)
	if len(t.b) > 2*t.max { // trimming at twice the bound keeps appends amortised O(1)
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
}

// String is the kept tail, cut at a line start so no half line is judged.
func (t *tailBuf) String() string {
	b := t.b
	if len(b) > t.max {
		b = b[len(b)-t.max:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < 4096 {
			b = b[i+1:]
		}
	}
	return string(b)
}
